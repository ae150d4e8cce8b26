#include "codegen/memory_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "codegen/expr.h"

namespace cot::codegen {

int64_t element_bytes(Scalar t) {
  switch (t) {
    case Scalar::F32:
      return 4;
    case Scalar::Bool:
      return 1;
    default:
      return 8;
  }
}

namespace {

struct Buffer {
  Alloc* alloc = nullptr;
  int arena = 0;
  int64_t bytes = 0;
  int start = 0, end = 0;
  std::vector<int> loops;  // loops enclosing the Alloc
};

struct LoopSpan {
  int start = 0, end = 0;
};

// One walk over the function in statement order: positions, loop spans, buffers, uses.
class Liveness {
 public:
  explicit Liveness(LoopFunction& fn) : fn_(fn) {}

  void run() {
    walk(fn_.body, 0);
    for (Buffer& b : buffers_) b.end = std::max(b.end, b.start);
  }
  std::vector<Buffer>& buffers() { return buffers_; }
  int arenas() const { return next_arena_; }
  std::vector<For*>& parallel_loops() { return parallel_; }

 private:
  void walk(Body& body, int arena) {
    for (Stmt& s : body) {
      const int here = pos_++;
      std::visit([&](auto& op) { visit(op, here, arena); }, s.op);
    }
  }
  void visit(Declare& d, int here, int) { use(d.value, here); }
  void visit(Assign& a, int here, int) { use(a.value, here); }
  void visit(Store& s, int here, int) {
    use_pointer(s.pointer, here);
    use(s.index, here);
    use(s.value, here);
  }
  void visit(CheckedInt& c, int here, int) {
    for (const ExprP& e : c.args) use(e, here);
  }
  void visit(For& f, int here, int arena) {
    use(f.begin, here);
    use(f.end, here);
    int inner = arena;
    if (f.parallel) {
      inner = ++next_arena_;
      f.arena = inner;
      parallel_.push_back(&f);
    }
    loop_body(f.body, inner);
  }
  void visit(Forever& f, int, int arena) { loop_body(f.body, arena); }
  void visit(Break&, int, int) {}
  void visit(If& i, int here, int arena) {
    use(i.cond, here);
    walk(i.then_body, arena);
    walk(i.else_body, arena);
  }
  void visit(Fail& f, int here, int) {
    for (const ExprP& e : f.values) use(e, here);
  }
  void visit(Alloc& a, int here, int arena) {
    use(a.count, here);
    auto n = as_i64(a.count);
    if (!n || a.on_stack) return;  // a heap buffer or a local array
    Buffer b;
    b.alloc = &a;
    b.arena = arena;
    b.bytes = *n * element_bytes(fn_.locals[static_cast<size_t>(a.pointer)].type);
    b.start = b.end = here;
    b.loops = open_loops_;
    roots_[a.pointer] = {static_cast<int>(buffers_.size())};
    buffers_.push_back(b);
  }
  void visit(View& v, int here, int) {
    use(v.offset, here);
    use_pointer(v.base, here);
    roots_[v.pointer] = roots_[v.base];
  }
  void visit(Copy& c, int here, int) {
    use_pointer(c.dst, here);
    use_pointer(c.src, here);
    use(c.dst_offset, here);
    use(c.src_offset, here);
    use(c.count, here);
  }
  void visit(Fill& f, int here, int) {
    use_pointer(f.dst, here);
    use(f.offset, here);
    use(f.count, here);
    use(f.value, here);
  }
  void visit(Combine& c, int here, int) {
    use_pointer(c.dst, here);
    use_pointer(c.src, here);
    use(c.dst_offset, here);
    use(c.src_offset, here);
    use(c.count, here);
  }
  void visit(Swap& s, int here, int) {
    use_pointer(s.a, here);
    use_pointer(s.b, here);
    std::set<int> both = roots_[s.a];
    both.insert(roots_[s.b].begin(), roots_[s.b].end());
    roots_[s.a] = both;
    roots_[s.b] = both;
  }
  void visit(StackInit&, int, int) {}
  void visit(StackGrow& g, int here, int) { use(g.count, here); }

  void loop_body(Body& body, int arena) {
    const int id = static_cast<int>(loops_.size());
    loops_.push_back(LoopSpan{pos_, 0});
    open_loops_.push_back(id);
    const size_t first = pending_.size();
    walk(body, arena);
    open_loops_.pop_back();
    loops_[static_cast<size_t>(id)].end = pos_;
    // Uses recorded inside this loop of buffers allocated outside it last to its end.
    for (size_t k = first; k < pending_.size(); ++k) {
      Buffer& b = buffers_[static_cast<size_t>(pending_[k].first)];
      if (std::find(b.loops.begin(), b.loops.end(), id) == b.loops.end() &&
          b.start < loops_[static_cast<size_t>(id)].start) {
        b.end = std::max(b.end, pos_);
      }
    }
  }
  void use_pointer(LocalId p, int here) {
    auto it = roots_.find(p);
    if (it == roots_.end()) return;
    for (int b : it->second) {
      Buffer& buf = buffers_[static_cast<size_t>(b)];
      buf.end = std::max(buf.end, here);
      pending_.emplace_back(b, here);
    }
  }
  void use(const ExprP& e, int here) {
    if (!e) return;
    if (e->kind == Expr::Kind::Load || e->kind == Expr::Kind::Local) use_pointer(e->local, here);
    for (const ExprP& a : e->args) use(a, here);
  }

  LoopFunction& fn_;
  int pos_ = 0;
  int next_arena_ = 0;
  std::vector<Buffer> buffers_;
  std::vector<LoopSpan> loops_;
  std::vector<int> open_loops_;
  std::map<LocalId, std::set<int>> roots_;
  std::vector<std::pair<int, int>> pending_;  // (buffer, position) of every use, in order
  std::vector<For*> parallel_;
};

int64_t align(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

// First fit in order of allocation: the lowest offset that overlaps no buffer live at once.
int64_t place(std::vector<Buffer*>& bufs) {
  std::sort(bufs.begin(), bufs.end(), [](const Buffer* a, const Buffer* b) {
    return a->start != b->start ? a->start < b->start : a->bytes > b->bytes;
  });
  std::vector<Buffer*> placed;
  int64_t total = 0;
  for (Buffer* b : bufs) {
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (const Buffer* o : placed) {
      if (o->end < b->start || b->end < o->start) continue;
      taken.emplace_back(o->alloc->arena_offset, o->alloc->arena_offset + align(o->bytes));
    }
    std::sort(taken.begin(), taken.end());
    int64_t at = 0;
    for (const auto& [lo, hi] : taken) {
      if (at + align(b->bytes) <= lo) break;
      at = std::max(at, hi);
    }
    b->alloc->arena_offset = at;
    b->alloc->arena = b->arena;
    total = std::max(total, at + align(b->bytes));
    placed.push_back(b);
  }
  return total;
}

}  // namespace

void plan_memory(LoopFunction& fn) {
  Liveness live(fn);
  live.run();
  std::vector<std::vector<Buffer*>> by_arena(static_cast<size_t>(live.arenas()) + 1);
  for (Buffer& b : live.buffers()) by_arena[static_cast<size_t>(b.arena)].push_back(&b);
  fn.arena_bytes = place(by_arena[0]);
  for (For* f : live.parallel_loops()) {
    f->thread_arena_bytes = place(by_arena[static_cast<size_t>(f->arena)]);
  }
}

}  // namespace cot::codegen
