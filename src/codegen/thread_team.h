// The number of threads compiled code's parallel loops run on. libgomp ends the process when it
// cannot create a team's threads ("libgomp: Thread creation failed"), so the host asks the
// system first and runs on fewer threads, down to one, instead (docs/design.md, "Parallel
// loops").
#pragma once

namespace cot::codegen {

// The most threads a team may have: more are refused by the command line, and a team this
// large is already far past any gain.
inline constexpr int kMaxTeam = 4096;

// The team for parallel loops when `requested` threads are asked for (0: as many as OpenMP
// would start, $OMP_NUM_THREADS or one per processor available), at most kMaxTeam. Probes by
// starting as many threads as the team has (one more than it starts), alive together as a
// team's are, and joining them: when some cannot be started, the team is half of those that
// could (with the calling thread, at least 1), leaving room for what its threads allocate.
int creatable_team(int requested);

}  // namespace cot::codegen
