"""The exceptions of the cotangent package.

Every error the compiler or a call reports carries where it is (file, line, column), what is
wrong (message) and how to fix it where that is known (help); str() of the exception is the
text the command line prints: the position, the source line with a caret, and the help.
"""


class Diagnostic:
    """One error: file (empty when it has no source position), line and column (1-based; 0
    when unknown), message, help, and rendered (the full text)."""

    __slots__ = ("file", "line", "column", "message", "help", "rendered")

    def __init__(self, file, line, column, message, help, rendered):
        self.file = file
        self.line = line
        self.column = column
        self.message = message
        self.help = help
        self.rendered = rendered

    def __repr__(self):
        where = f"{self.file}:{self.line}:{self.column}: " if self.file else ""
        return f"<Diagnostic {where}{self.message}>"


class Error(Exception):
    """An error reported by Cotangent. `file`, `line`, `column`, `message` and `help` are
    those of the first error; `errors` lists every one (a module can have several)."""

    def __init__(self, text, errors=()):
        super().__init__(text)
        self.errors = [Diagnostic(*e) for e in errors]
        first = self.errors[0] if self.errors else Diagnostic("", 0, 0, text, "", text)
        self.file = first.file
        self.line = first.line
        self.column = first.column
        self.message = first.message
        self.help = first.help


class CompileError(Error):
    """A module, function or derived function that cannot be built: a syntax or type error,
    a derivative operator applied where it cannot be, a limitation of differentiation."""


class EvaluationError(Error):
    """A call that failed: bad inputs, an index out of range, sizes that disagree, a while
    loop over its limit."""
