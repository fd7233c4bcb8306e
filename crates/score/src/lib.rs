//! Scoring rules of published optimisation benchmarks and leaderboard audit diagnostics.
