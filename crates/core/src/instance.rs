//! Built ETIP instances: what `etip build` writes per instance (`status.json`, one JSON line each on
//! stdout) and what the runner reads to find the image and the two source trees.

use serde::{Deserialize, Serialize};

pub use crate::language::Language;

/// The toolchain an instance is built with, and where the version came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toolchain {
    pub language: Language,
    /// JDK feature version (`"17"`) or Python version (`"3.11"`) the image provides.
    pub version: String,
    /// What the repository asked for (`"17"`, `">=3.8"`), if anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
    /// The file (and key) the request was read from, or `"default"`.
    pub source: String,
    /// Build tool: `"./mvnw"`, `"mvn"` or `"pip"`.
    pub build_tool: String,
    /// Why this version, in one sentence (empty in statuses written before etip chose by the
    /// commit's time).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
    /// What the commit's files say of the versions it supports (`"setup.py: classifiers: 2.7, 3.4"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// The version first chosen, when its smoke check failed as an interpreter incompatibility
    /// and this older one was tried instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The dependency date of the env layer (ISO 8601), when the dependencies were resolved as
    /// of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deps_as_of: Option<String>,
    /// Requirements installed from releases after the dependency date, because none was before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relaxed: Vec<String>,
    /// Test-runner pins of the commit set aside (`"pytest==2.8.1"`, `"py==1.4.30"`): a pytest
    /// older than 3.0 runs on no interpreter etip has; the pytest installed brings its own parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub set_aside: Vec<String>,
    /// Where each setting of the environment came from, when a benchmark's environment spec
    /// was given (`etip import --specs`): the spec's, or etip's own inference.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingSource>,
}

/// One setting of an instance's environment and its source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettingSource {
    /// `python`, `dependencies`, `packages`, `pre_install`, `install`.
    pub setting: String,
    pub value: String,
    /// `spec (specs.json: sympy/sympy 1.1)`, `inferred (...)`, or why a spec's setting was not
    /// applied.
    pub source: String,
}

/// Kind of image layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LayerKind {
    Base,
    Env,
    Instance,
}

/// One image layer of an instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    pub kind: LayerKind,
    pub tag: String,
    pub image_id: String,
    /// Size of the whole image (this layer and everything below it).
    pub size_bytes: i64,
    /// Size this layer adds on top of its parent.
    pub layer_bytes: i64,
    /// Seconds spent building this layer in this run (0 when it was reused).
    pub build_secs: f64,
    /// The layer existed already (same content key) and was reused.
    pub reused: bool,
}

/// Why an instance could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    Clone,
    Checkout,
    NoBaseImage,
    /// The project needs a Python or JDK that no configured image provides (the detail names it
    /// and the registry image that would).
    InterpreterUnavailable,
    DependencyResolution,
    /// A requirement has no release before the dependency date, and was not relaxed.
    DependencyUnavailableBefore,
    /// The patched tree needs an artifact the original does not, and the env layer (resolved
    /// from the original's build descriptors) does not hold it.
    DependencyMissing,
    /// A version built, but its smoke check failed: a changed module does not import, pytest
    /// cannot collect the tests, a test class was not compiled, or the build backend or the
    /// environment setup is missing.
    EnvironmentIncomplete,
    OriginalCompile,
    PatchedCompile,
    /// The ETIP's patch (its patched side) does not apply to its base commit, even after the
    /// normalisations `etip build` tries (the detail is git's message).
    PatchDoesNotApply,
    Timeout,
    Engine,
    Input,
}

impl FailureKind {
    /// The human-readable reason recorded in `status.json`.
    pub fn reason(&self) -> &'static str {
        match self {
            FailureKind::Clone => "clone failed",
            FailureKind::Checkout => "checkout failed",
            FailureKind::NoBaseImage => "no base image",
            FailureKind::InterpreterUnavailable => "interpreter unavailable",
            FailureKind::DependencyUnavailableBefore => "dependency unavailable before the date",
            FailureKind::DependencyResolution => "dependency resolution failed",
            FailureKind::DependencyMissing => "dependency missing",
            FailureKind::EnvironmentIncomplete => "environment incomplete",
            FailureKind::OriginalCompile => "original does not compile",
            FailureKind::PatchedCompile => "patched does not compile",
            FailureKind::PatchDoesNotApply => "patch does not apply",
            FailureKind::Timeout => "timeout",
            FailureKind::Engine => "docker engine error",
            FailureKind::Input => "invalid input",
        }
    }
}

/// Outcome of building one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildOutcome {
    /// Built in this run.
    Built,
    /// The instance image already existed with the same content key: nothing was rebuilt.
    Reused,
    Failed,
}

/// The status of one instance after `etip build` (`<logs>/<id>/status.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceStatus {
    pub id: String,
    pub language: Language,
    pub outcome: BuildOutcome,
    /// Human-readable failure reason, e.g. `"patched does not compile"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureKind>,
    /// Details of the failure (last lines of the log, error message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolchain: Option<Toolchain>,
    /// The instance image to run (when built or reused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// The folder of a build without containers (`etip build --executor local`): both trees and
    /// their environments on this host, under container-like paths (`work/original`,
    /// `opt/etip/...`). Such an instance has no image and runs on the local executor only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_root: Option<String>,
    #[serde(default)]
    pub layers: Vec<Layer>,
    pub base_commit: String,
    pub patched_commit: String,
    /// When the base commit was committed (unix seconds): the time whose toolchain and
    /// dependencies the build used, and the year of the build's yield table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_time: Option<i64>,
    /// The repository the trees came from (a local folder or a git URL): `etip eval` reads the
    /// ground-truth patch from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Directory of the original tree inside the image.
    pub original_dir: String,
    /// Directory of the patched tree inside the image.
    pub patched_dir: String,
    /// Environment to set when running the build tool or tests inside the image, per version
    /// (`original`, `patched`): e.g. the venv's `PATH` for Python, `MAVEN_ARGS` for Maven.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, Vec<String>>,
    /// Modules the change touches (Maven module folders, `""` for the root project; Python
    /// packages): the input's `changed_modules`, else computed from the files that differ.
    #[serde(default)]
    pub modules: Vec<String>,
    /// The build descriptors that differ between the base and the patched commit, one line each
    /// (`pyproject.toml changed: + `"numpy>=1.26",` - `"numpy>=1.24",``): the env layer holds
    /// the base commit's dependencies, so the patched version may lack some.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependency_changes: Vec<String>,
    /// The workloads the ETIP carries (scripts read in), timed by `etip measure` as detectors
    /// of kind `workload` beside the tests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<crate::detector::Workload>,
    /// The ETIP's patched side was given as a patch to its base commit (an imported task's gold
    /// patch): what was applied. `patched_commit` is then the commit `etip build` made of it in
    /// its own cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<AppliedPatch>,
    /// The benchmark task the ETIP was imported from (`etip import`), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Box<crate::task::Task>>,
    /// Wall-clock seconds of this instance's build in this run.
    pub build_secs: f64,
}

/// A patch `etip build` applied to an ETIP's base commit to make its patched version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppliedPatch {
    /// SHA-256 of the patch as given (hex).
    pub sha256: String,
    /// The patch as applied (after the normalisations): the ETIP's ground-truth patch.
    pub text: String,
    /// What had to change for `git apply` to take it (`added the missing final newline`, ...);
    /// empty when it applied as given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub normalised: Vec<String>,
}

impl InstanceStatus {
    /// Whether the instance can be run: built, with an image or a local build.
    pub fn runnable(&self) -> bool {
        self.outcome != BuildOutcome::Failed && (self.image.is_some() || self.local_root.is_some())
    }

    /// Why [`InstanceStatus::runnable`] is false, in words.
    pub fn not_runnable_reason(&self) -> &str {
        self.reason.as_deref().unwrap_or("no image")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kinds as `status.json` spells them, with their reasons.
    #[test]
    fn failure_kind_names_and_reasons() {
        for (kind, name, reason) in [
            (
                FailureKind::EnvironmentIncomplete,
                "environment_incomplete",
                "environment incomplete",
            ),
            (
                FailureKind::DependencyMissing,
                "dependency_missing",
                "dependency missing",
            ),
            (
                FailureKind::DependencyResolution,
                "dependency_resolution",
                "dependency resolution failed",
            ),
        ] {
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{name}\""));
            assert_eq!(
                serde_json::from_str::<FailureKind>(&format!("\"{name}\"")).unwrap(),
                kind
            );
            assert_eq!(kind.reason(), reason);
        }
    }
}
