//! Statistics for execution-time comparisons (paired sign test, Mann–Whitney U, SWE-Perf δ).
