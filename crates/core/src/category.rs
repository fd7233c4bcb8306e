//! What an evaluation decides: the category of an agent patch ([`Category`], `etip eval`) and of
//! a generated test ([`TestCategory`], `etip eval-test`), by the names results carry.

use serde::{Deserialize, Serialize};

/// What an evaluation decides about a prediction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// The agent produced no patch (or an empty one).
    NotGenerated,
    /// Not a well-formed unified diff, binary hunks, or paths that leave the tree.
    Malformed,
    /// Changes tests, benchmark or build files (refused unless test changes are allowed).
    Protected,
    /// Larger than the patch size limit (`patch::MAX_PATCH_BYTES`): refused before it is applied.
    TooLarge,
    DoesNotApply,
    /// The candidate does not build, or its smoke check fails.
    DoesNotCompile,
    /// Some test fails (or times out) on the candidate.
    TestsFail,
    /// Every test passes, but the candidate's reported times disagree with the wall time measured
    /// around its test command (rules §3.8): its code changed what its reports say. Never credited.
    TimingInconsistent,
    /// Every test passes; the sign test does not find the candidate significantly faster.
    CorrectNotFaster,
    /// Every test passes and the sign test finds the candidate significantly faster (SPEC 3.1).
    CorrectFaster,
    /// The harness failed, not the patch (engine, the harness's own limits, an instance that is
    /// not executable here): retried by the next run, reported apart.
    Error,
}

impl Category {
    pub const ALL: [Category; 11] = [
        Category::NotGenerated,
        Category::Malformed,
        Category::Protected,
        Category::TooLarge,
        Category::DoesNotApply,
        Category::DoesNotCompile,
        Category::TestsFail,
        Category::TimingInconsistent,
        Category::CorrectNotFaster,
        Category::CorrectFaster,
        Category::Error,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Category::NotGenerated => "not_generated",
            Category::Malformed => "malformed",
            Category::Protected => "protected",
            Category::TooLarge => "too_large",
            Category::DoesNotApply => "does_not_apply",
            Category::DoesNotCompile => "does_not_compile",
            Category::TestsFail => "tests_fail",
            Category::TimingInconsistent => "timing_inconsistent",
            Category::CorrectNotFaster => "correct_not_faster",
            Category::CorrectFaster => "correct_faster",
            Category::Error => "error",
        }
    }

    pub fn from_name(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name() == s)
    }
}

/// What an evaluation decides about a generated test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestCategory {
    /// No test patch (or an empty one).
    NotGenerated,
    /// Not a well-formed unified diff, binary hunks, paths that leave the tree, or no test class
    /// named to run.
    Malformed,
    /// The patch changes files that are not tests (source, build files): a test must not.
    NotTestOnly,
    /// The patch does not apply to one of the versions.
    DoesNotApply,
    /// A version does not build with the test, or its smoke check fails.
    DoesNotCompile,
    /// The test fails (or times out) on the original.
    FailsOnOriginal,
    /// The test fails (or times out) on the reference (ground-truth patched) version.
    FailsOnReference,
    /// Passes on both, but the reported times disagree with the wall time measured around the test
    /// command on some version (rules §3.8): the test's code changed what its reports say.
    TimingInconsistent,
    /// Passes on both; the sign test does not find the reference significantly faster.
    NotDetecting,
    /// Passes on both in every round and the reference is significantly faster: an ETIP detector
    /// test (rules §4.4).
    Detector,
    /// The harness failed, not the test: retried by the next run, reported apart.
    Error,
}

impl TestCategory {
    pub const ALL: [TestCategory; 11] = [
        TestCategory::NotGenerated,
        TestCategory::Malformed,
        TestCategory::NotTestOnly,
        TestCategory::DoesNotApply,
        TestCategory::DoesNotCompile,
        TestCategory::FailsOnOriginal,
        TestCategory::FailsOnReference,
        TestCategory::TimingInconsistent,
        TestCategory::NotDetecting,
        TestCategory::Detector,
        TestCategory::Error,
    ];

    /// The name in results (`detector`, `fails_on_reference`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TestCategory::NotGenerated => "not_generated",
            TestCategory::Malformed => "malformed",
            TestCategory::NotTestOnly => "not_test_only",
            TestCategory::DoesNotApply => "does_not_apply",
            TestCategory::DoesNotCompile => "does_not_compile",
            TestCategory::FailsOnOriginal => "fails_on_original",
            TestCategory::FailsOnReference => "fails_on_reference",
            TestCategory::TimingInconsistent => "timing_inconsistent",
            TestCategory::NotDetecting => "not_detecting",
            TestCategory::Detector => "detector",
            TestCategory::Error => "error",
        }
    }
}
