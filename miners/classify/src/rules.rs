//! The offline classifier's rules: phrases per topic with a weight, and label rules.
//!
//! A phrase is a sequence of words matched on word boundaries after normalisation (lower case,
//! every run of characters other than letters and digits becomes one space: `O(n^2)` reads
//! `o n 2`, `speed-up` reads `speed up`). A word ending in `*` matches every word it begins
//! (`deadlock*`: deadlock, deadlocks, deadlocked). Each rule counts once per field, however often
//! it matches there, so a long body does not outvote its title.

use crate::Topic;

/// One phrase rule.
#[derive(Debug, Clone, Copy)]
pub struct Phrase {
    pub topic: Topic,
    pub words: &'static str,
    pub weight: u32,
}

const fn p(topic: Topic, words: &'static str, weight: u32) -> Phrase {
    Phrase {
        topic,
        words,
        weight,
    }
}

use Topic::{
    BuildSpeed, Correctness, Docs, ExecutionTime as Et, FlakyTest, Hang, Memory, Refactor,
};

/// Every phrase rule, by topic.
pub const PHRASES: &[Phrase] = &[
    // Execution time: the code takes long, or a change makes it take less.
    p(Et, "slow*", 3),
    p(Et, "faster", 3),
    p(Et, "fast path", 2),
    p(Et, "speed up", 3),
    p(Et, "speeds up", 3),
    p(Et, "speedup*", 3),
    p(Et, "performance", 2),
    p(Et, "perf", 2),
    p(Et, "performance regression", 2),
    p(Et, "latency", 3),
    p(Et, "throughput", 3),
    p(Et, "optimize", 3),
    p(Et, "optimise", 3),
    p(Et, "optimized", 3),
    p(Et, "optimised", 3),
    p(Et, "optimizes", 3),
    p(Et, "optimises", 3),
    p(Et, "optimizing", 3),
    p(Et, "optimising", 3),
    p(Et, "optimization*", 3),
    p(Et, "optimisation*", 3),
    p(Et, "quadratic", 3),
    p(Et, "o n 2", 3),
    p(Et, "o n n", 3),
    p(Et, "o n m", 3),
    p(Et, "exponential time", 3),
    p(Et, "cpu time", 3),
    p(Et, "cpu usage", 3),
    p(Et, "high cpu", 3),
    p(Et, "hot path", 3),
    p(Et, "hotspot*", 3),
    p(Et, "hot spot*", 3),
    p(Et, "bottleneck*", 3),
    p(Et, "takes forever", 3),
    p(Et, "takes too long", 3),
    p(Et, "times faster", 3),
    p(Et, "times slower", 3),
    p(Et, "inefficien*", 3),
    p(Et, "efficien*", 1),
    p(Et, "expensive", 1),
    p(Et, "benchmark*", 1),
    p(Et, "microbenchmark*", 2),
    p(Et, "jmh", 2),
    p(Et, "profiler", 1),
    p(Et, "profiling", 1),
    p(Et, "profiled", 1),
    p(Et, "unnecessary", 1),
    p(Et, "avoid*", 1),
    p(Et, "cache", 1),
    p(Et, "caching", 1),
    p(Et, "object creation", 3),
    p(Et, "unnecessary object*", 3),
    p(Et, "allocation*", 2),
    // Memory: leaks, footprint, out-of-memory.
    p(Memory, "memory", 2),
    p(Memory, "memory leak*", 3),
    p(Memory, "leak*", 3),
    p(Memory, "out of memory", 3),
    p(Memory, "outofmemory*", 3),
    p(Memory, "oom", 3),
    p(Memory, "memory usage", 3),
    p(Memory, "memory consumption", 3),
    p(Memory, "footprint", 3),
    p(Memory, "heap", 2),
    p(Memory, "ram", 2),
    p(Memory, "rss", 2),
    // A bug that never finishes is a hang, not a slow path.
    p(Hang, "deadlock*", 4),
    p(Hang, "livelock*", 4),
    p(Hang, "hang", 4),
    p(Hang, "hangs", 4),
    p(Hang, "hanging", 4),
    p(Hang, "hung", 4),
    p(Hang, "infinite loop", 4),
    p(Hang, "never returns", 4),
    p(Hang, "never finishes", 4),
    p(Hang, "stuck", 3),
    p(Hang, "freez*", 3),
    p(Hang, "spin*", 1),
    // Tests that fail at random.
    p(FlakyTest, "flaky", 5),
    p(FlakyTest, "flakey", 5),
    p(FlakyTest, "flakiness", 5),
    p(FlakyTest, "intermittent*", 4),
    p(FlakyTest, "sporadic*", 4),
    p(FlakyTest, "randomly fail*", 4),
    p(FlakyTest, "fails randomly", 4),
    // The speed of building, testing or installing the project, not of its code.
    p(BuildSpeed, "build time*", 4),
    p(BuildSpeed, "compile time*", 4),
    p(BuildSpeed, "compilation time*", 4),
    p(BuildSpeed, "ci", 2),
    p(BuildSpeed, "test suite", 3),
    p(BuildSpeed, "tests take", 4),
    p(BuildSpeed, "slow test*", 4),
    p(BuildSpeed, "test run*", 2),
    p(BuildSpeed, "pip install", 3),
    p(BuildSpeed, "install time", 4),
    p(BuildSpeed, "installation", 2),
    p(BuildSpeed, "wheel size", 4),
    p(BuildSpeed, "download size", 4),
    p(BuildSpeed, "package size", 4),
    p(BuildSpeed, "gradle", 1),
    p(BuildSpeed, "github actions", 2),
    p(BuildSpeed, "appveyor", 3),
    p(BuildSpeed, "travis", 3),
    p(BuildSpeed, "tox", 2),
    p(BuildSpeed, "setup py", 3),
    p(BuildSpeed, "tests faster", 4),
    p(BuildSpeed, "faster tests", 4),
    p(BuildSpeed, "faster ci", 4),
    p(BuildSpeed, "ci faster", 4),
    p(BuildSpeed, "pip cache", 4),
    p(BuildSpeed, "cache pip", 4),
    // Documentation.
    p(Docs, "documentation", 3),
    p(Docs, "docs", 3),
    p(Docs, "doc", 2),
    p(Docs, "javadoc*", 3),
    p(Docs, "docstring*", 3),
    p(Docs, "typo*", 3),
    p(Docs, "readme", 3),
    p(Docs, "tutorial", 2),
    // Wrong results and crashes.
    p(Correctness, "wrong result*", 3),
    p(Correctness, "incorrect*", 2),
    p(Correctness, "crash*", 2),
    p(Correctness, "nullpointerexception", 3),
    p(Correctness, "npe", 3),
    p(Correctness, "exception", 1),
    p(Correctness, "error", 1),
    // A revert restores behaviour (an optimisation's revert is no ETIP; the optimisation is).
    p(Correctness, "revert*", 1),
    p(Correctness, "undo", 1),
    // Refactoring and clean-up, including "optimize the code" in the sense of tidying it.
    p(Refactor, "refactor*", 4),
    p(Refactor, "clean up", 3),
    p(Refactor, "cleanup", 3),
    p(Refactor, "polish*", 3),
    p(Refactor, "chore", 3),
    p(Refactor, "readabilit*", 3),
    p(Refactor, "code style", 3),
    p(Refactor, "checkstyle", 3),
    p(Refactor, "lint*", 3),
    p(Refactor, "pyflakes", 3),
    p(Refactor, "flake8", 3),
    p(Refactor, "redundant", 3),
    p(Refactor, "unused", 2),
    p(Refactor, "unnecessary else", 4),
    p(Refactor, "optimize code", 5),
    p(Refactor, "optimise code", 5),
    p(Refactor, "optimize the code", 5),
    p(Refactor, "optimise the code", 5),
    p(Refactor, "optimize some code", 5),
    p(Refactor, "code optimization", 5),
    p(Refactor, "code optimisation", 5),
    p(Refactor, "optimization code", 5),
    p(Refactor, "optimize imports", 5),
];

/// A label rule: a label containing `word` (as a word of the normalised label) counts for
/// `topic`.
#[derive(Debug, Clone, Copy)]
pub struct LabelRule {
    pub topic: Topic,
    pub word: &'static str,
    pub weight: u32,
}

const fn l(topic: Topic, word: &'static str, weight: u32) -> LabelRule {
    LabelRule {
        topic,
        word,
        weight,
    }
}

/// Labels are the maintainers' own classification: they weigh more than any phrase.
pub const LABELS: &[LabelRule] = &[
    l(Et, "performance", 6),
    l(Et, "perf", 6),
    l(Et, "speed", 6),
    l(Et, "slow", 6),
    l(Et, "optimization", 6),
    l(Et, "optimisation", 6),
    l(Memory, "memory", 6),
    l(Memory, "leak", 6),
    l(FlakyTest, "flaky", 6),
    l(FlakyTest, "flaky-test", 6),
    l(Docs, "documentation", 4),
    l(Docs, "docs", 4),
    l(BuildSpeed, "build", 3),
    l(BuildSpeed, "ci", 3),
    l(BuildSpeed, "infrastructure", 3),
    l(BuildSpeed, "packaging", 3),
];

/// Text weight of each field: a title says what the thread is about.
pub const TITLE_FACTOR: u32 = 2;
pub const BODY_FACTOR: u32 = 1;
pub const COMMIT_FACTOR: u32 = 1;

/// The execution-time score needed for `yes` (and it must exceed every other topic's).
pub const THRESHOLD: u32 = 3;
