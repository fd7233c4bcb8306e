//! SWE-fficiency `eval_report_<model>.csv` through `etip_score::input::load_file` (the score readers
//! have no in-memory entry point, so the input goes through a scratch file named `*.csv`).
#![no_main]

use etip_score::input::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(sub) = etip_fuzz::load_score("swefficiency_csv", "eval_report_fuzz.csv", data) else {
        return;
    };
    let text = etip_fuzz::text_as_read(data).expect("a file that was read is UTF-8");
    let first = text.trim_start().chars().next();
    if first != Some('{') {
        assert_eq!(
            sub.format,
            Format::SwefficiencyCsv,
            "a .csv file not starting with '{{' read as another format"
        );
    }
    if sub.format != Format::SwefficiencyCsv {
        return;
    }
    assert_eq!(sub.name, "eval_report_fuzz");
    for t in &sub.tasks {
        let correct = t
            .correct
            .expect("SWE-fficiency rows always say correct or not");
        assert!(t.gold_speedup.is_some(), "a row without gold_speedup");
        assert!(
            t.official.as_ref().and_then(|o| o.speedup_ratio).is_some(),
            "a row without the official speedup ratio"
        );
        if correct {
            assert!(t.speedup.is_some(), "a correct row without a speedup");
        }
    }
    // No sibling .json beside the scratch file: no official numbers.
    assert!(sub.official_score.is_none() && sub.official_summary.is_empty());
});
