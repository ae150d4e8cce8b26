"""Counts and findings of a campaign, shared by its worker threads."""

import threading


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = {}
        self.findings = []

    def add(self, key, k=1):
        with self.lock:
            self.n[key] = self.n.get(key, 0) + k

    def get(self, key):
        return self.n.get(key, 0)
