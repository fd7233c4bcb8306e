//! The Python env layer's dependency steps: the scripts it carries (`etip_pydeps.py` reads the
//! requirements of the build descriptors, `etip_pyinstall.py` installs them as of a date), the
//! files it leaves in the image, and the shell steps that run them.

use super::{ENV_VENV, EXIT_DEPENDENCY, EXIT_SETUP, key, sh_quote};
use etip_core::instance::Language;

/// The script that reads the Python dependencies the build descriptors declare
/// (`harness/build/scripts/etip_pydeps.py`; see the README, "Python dependencies").
pub const PYDEPS_SCRIPT: &str = include_str!("../../scripts/etip_pydeps.py");
/// Where [`PYDEPS_SCRIPT`] is in the env layer's context (and image).
pub const PYDEPS_PATH: &str = "opt/etip/scripts/etip_pydeps.py";
/// The requirements the Python env layer installs (kept in the image).
pub const ENV_REQUIREMENTS: &str = "/opt/etip/requirements.txt";
/// `pip freeze --all` of the env venv after the installation (kept in the image).
pub const ENV_LOCK: &str = "/opt/etip/env-lock.txt";
/// Prefix of the env layer's line naming the requirement pip could not install.
pub const REQUIREMENT_FAILED: &str = "etip: requirement not installable: ";
/// Prefix of the env layer's line naming a requirement with no release before its date.
pub const UNAVAILABLE_BEFORE: &str = "etip: no release before ";
/// The script that installs the requirements as of a date (uv `--exclude-newer`, relaxing a
/// requirement with no release before it): `harness/build/scripts/etip_pyinstall.py`.
pub const PYINSTALL_SCRIPT: &str = include_str!("../../scripts/etip_pyinstall.py");
/// Where [`PYINSTALL_SCRIPT`] is in the env layer's context (and image).
pub const PYINSTALL_PATH: &str = "opt/etip/scripts/etip_pyinstall.py";
/// What [`PYINSTALL_SCRIPT`] did (kept in the image): the date, the tool, the relaxed
/// requirements.
pub const ENV_AS_OF: &str = "/opt/etip/deps-as-of.json";

/// The date an env layer resolves its dependencies as of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepsDate {
    /// ISO 8601, UTC: `2015-12-02T00:00:00Z`.
    pub as_of: String,
    /// Relax a requirement that has no release before the date (else it fails the layer).
    pub relax: bool,
}

/// Files of the env layer's context besides `env.sh`: (path in the context, content).
pub fn env_context_files(lang: Language) -> Vec<(&'static str, &'static str)> {
    match lang {
        Language::Java => Vec::new(),
        Language::Python => vec![
            (PYDEPS_PATH, PYDEPS_SCRIPT),
            (PYINSTALL_PATH, PYINSTALL_SCRIPT),
        ],
    }
}

/// The Python env layer's dependency steps: [`PYDEPS_SCRIPT`] lists the requirements of the
/// original's build descriptors (`/opt/etip/env-src`) in [`ENV_REQUIREMENTS`], pip installs them
/// into the env venv (index, proxy and certificates from the `PIP_*` variables of the build
/// container; an already satisfied requirement needs no index), and [`ENV_LOCK`] records what the
/// venv then holds (pip's cache goes to `/tmp`, which the layer does not keep). A requirement
/// pip cannot install fails the layer with [`EXIT_DEPENDENCY`].
/// The script's hash is in the comment, so that the env key changes with it.
/// `extra`: requirements a benchmark's environment spec adds (`gmpy2`), appended to the
/// descriptors' before the installation.
pub(super) fn python_env_steps(date: Option<&DepsDate>, extra: &[String]) -> String {
    let extra = if extra.is_empty() {
        String::new()
    } else {
        format!(
            "printf '%s\\n' {list} >> {ENV_REQUIREMENTS}\necho \"etip: + {shown} (the task's environment spec)\"\n",
            list = extra
                .iter()
                .map(|r| sh_quote(r))
                .collect::<Vec<_>>()
                .join(" "),
            shown = extra.join(" ").replace(['"', '$', '`', '\\'], "")
        )
    };
    let pip_log = "/tmp/etip-pip.log";
    let install = match date {
        None => format!(
            r#"set -- -r {ENV_REQUIREMENTS}
if [ -s /opt/etip/constraints.txt ]; then set -- "$@" -c /opt/etip/constraints.txt; fi
echo "etip: pip install $* (into {ENV_VENV})"
"$PY" -m pip install "$@" > {pip_log} 2>&1; rc=$?
cat {pip_log}
if [ $rc -ne 0 ]; then
  req=$(sed -n 's/^ERROR: No matching distribution found for //p' {pip_log} | head -n 1)
  [ -n "$req" ] || req=$(sed -n 's/^ERROR: Could not find a version that satisfies the requirement \([^ ]*\).*/\1/p' {pip_log} | head -n 1)
  [ -n "$req" ] || req=$(sed -n 's/^ERROR: Cannot install \(.*\) because these package versions have conflicting dependencies.*/\1 (conflicting dependencies)/p' {pip_log} | head -n 1)
  [ -n "$req" ] || req=$(sed -n 's/^Collecting \([^ ]*\).*/\1/p' {pip_log} | tail -n 1)
  rm -f {pip_log}
  echo "{REQUIREMENT_FAILED}${{req:-a requirement of {ENV_REQUIREMENTS}}} (pip exit $rc)"
  exit {EXIT_DEPENDENCY}
fi
rm -f {pip_log}
"#
        ),
        Some(d) => format!(
            r#"# etip_pyinstall.py {hash}
echo "etip: dependencies as of {as_of}: releases uploaded before it (into {ENV_VENV})"
touch /opt/etip/constraints.txt
"$PY" /{PYINSTALL_PATH} {ENV_REQUIREMENTS} /opt/etip/constraints.txt {as_of} {ENV_AS_OF}{relax}; rc=$?
rm -rf /tmp/etip-uv /tmp/etip-uv.log /tmp/etip-uv-cache /tmp/etip-missing.txt /tmp/etip-runner-constraints.txt
[ $rc -eq 0 ] || exit $rc
"#,
            hash = key(&[PYINSTALL_SCRIPT]),
            as_of = sh_quote(&d.as_of),
            relax = if d.relax { "" } else { " --no-relax" },
        ),
    };
    format!(
        r#"# etip_pydeps.py {hash}
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PIP_ROOT_USER_ACTION=ignore
export PIP_CACHE_DIR="${{PIP_CACHE_DIR:-/tmp/etip-pip-cache}}"
PY={ENV_VENV}/bin/python
"$PY" /{PYDEPS_PATH} /opt/etip/env-src --out-dir /opt/etip || {{ echo 'etip: reading the Python dependencies of the build descriptors failed'; exit {EXIT_SETUP}; }}
"$PY" -m pip --version >/dev/null 2>&1 || {{ echo 'etip: pip is not available to {ENV_VENV} (is python3-pip installed?)'; exit {EXIT_SETUP}; }}
{extra}{install}"$PY" -m pip freeze --all > {ENV_LOCK} || {{ echo 'etip: pip freeze failed'; exit {EXIT_SETUP}; }}
echo 'etip: the env venv holds ({ENV_LOCK}):'
sed 's/^/  /' {ENV_LOCK}
"#,
        hash = key(&[PYDEPS_SCRIPT]),
    )
}
