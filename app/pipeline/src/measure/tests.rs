//! Which tests `measure` and `eval` run for the covering, auto and task choices: the covering
//! tests of each ETIP from the selection of `select`, or the correctness tests of the task it was
//! imported from.

use crate::InputError;
use crate::progress::Progress;
use crate::timing::TestChoice;
use etip_core::instance::InstanceStatus;
use etip_core::selection::SelectionOutcome;
use etip_measure::measure::{Covering, Tests};

/// `covering` needs a usable selection for every built ETIP; `auto` takes what there is for
/// Python ETIPs (Java keeps its modules; without a selection every ETIP runs its modules). The
/// selection also brings each ETIP's covering suite benchmarks. Shared by `measure` and `eval`.
pub(crate) fn covering(
    choice: &TestChoice,
    selection: Option<&std::path::Path>,
    statuses: &[InstanceStatus],
    progress: &dyn Progress,
) -> anyhow::Result<Tests> {
    let strict = *choice == TestChoice::Covering;
    let Some(path) = selection else {
        if strict {
            return Err(InputError(
                "--tests covering needs --selection DIR, the output folder of `etip select`".into(),
            )
            .into());
        }
        return Ok(Tests::Modules);
    };
    let selections = crate::records::read_selections(path)?;
    let mut map = std::collections::BTreeMap::new();
    for st in statuses.iter().filter(|s| s.runnable()) {
        // `auto`: Java keeps its modules until selection is proven on real Java repositories.
        if !strict && st.language == etip_core::Language::Java {
            continue;
        }
        let usable = selections
            .get(&st.id)
            .filter(|s| s.outcome != SelectionOutcome::Failed);
        match usable {
            Some(s) if s.outcome == SelectionOutcome::NoCoveringTests => {
                map.insert(st.id.clone(), Covering::from_selection(s));
            }
            Some(s) => {
                if s.image != st.image {
                    progress.note(&format!(
                        "warning: {}: the selection was made in image {}, the ETIP is now {}; run `etip select` again",
                        st.id,
                        s.image.as_deref().unwrap_or("-"),
                        st.image.as_deref().unwrap_or("-")
                    ));
                }
                map.insert(st.id.clone(), Covering::from_selection(s));
            }
            None if strict => {
                let why = selections
                    .get(&st.id)
                    .and_then(|s| s.detail.clone())
                    .unwrap_or_else(|| "no selection".into());
                return Err(InputError(format!(
                    "--tests covering: {} has no usable selection in {} ({why}); run `etip select` for it or use --tests auto",
                    st.id,
                    path.display()
                ))
                .into());
            }
            None => {}
        }
    }
    Ok(Tests::Covering(map))
}

/// `--tests task`: per ETIP imported from a task dataset, the task's correctness tests
/// (SWE-fficiency's `covering_tests`, else SWE-bench's `PASS_TO_PASS`; `FAIL_TO_PASS` tests
/// come with the task's `test_patch`, which the built trees do not have). ETIPs without a task
/// run their modules; a set of ETIPs none of which has a task is bad input.
pub(crate) fn from_tasks(statuses: &[InstanceStatus]) -> anyhow::Result<Tests> {
    let mut map = std::collections::BTreeMap::new();
    for st in statuses.iter().filter(|s| s.runnable()) {
        let Some(task) = &st.task else {
            continue;
        };
        let mut tests = if task.covering_tests.is_empty() {
            task.pass_to_pass.clone()
        } else {
            task.covering_tests.clone()
        };
        tests.sort();
        tests.dedup();
        let detail = if tests.is_empty() {
            format!(
                "the {} task {} names no correctness tests",
                task.format.as_str(),
                task.instance_id
            )
        } else {
            String::new()
        };
        map.insert(
            st.id.clone(),
            Covering {
                tests,
                detail,
                suites: Vec::new(),
            },
        );
    }
    if map.is_empty() {
        return Err(InputError(
            "--tests task: no built ETIP of --etips was imported from a task dataset (`etip import`)"
                .into(),
        )
        .into());
    }
    Ok(Tests::Covering(map))
}
