//! Which tests `measure` runs for covering and auto choices: the covering tests of each ETIP
//! from the selection of `select`.

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
