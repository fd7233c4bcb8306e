//! `measurements.jsonl` of `etip measure` (`etip.measurement`) through
//! `etip_score::input::load_file` (scratch file `run-7/measurements.jsonl`, so the submission is
//! named after its folder).
#![no_main]

use etip_records::measure::Measurement;
use etip_score::input::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(sub) = etip_fuzz::load_score("measurements_jsonl", "run-7/measurements.jsonl", data)
    else {
        return;
    };
    assert!(
        matches!(sub.format, Format::EtipJsonl | Format::EtipMeasurements),
        "a .jsonl file read as {:?}",
        sub.format
    );
    let text = etip_fuzz::text_as_read(data).expect("a file that was read is UTF-8");
    let lines = etip_fuzz::non_blank_lines(text);
    assert_eq!(
        sub.tasks.len(),
        lines,
        "tasks and non-blank lines differ in number"
    );
    if sub.format != Format::EtipMeasurements {
        return;
    }
    assert_eq!(
        sub.name, "run-7",
        "measurements.jsonl is named after its folder"
    );
    for (m, t) in sub.measurements.iter().zip(&sub.tasks) {
        assert_eq!(m.id, t.instance_id);
        assert_eq!(m.executable, m.reason.is_none());
        assert_eq!(t.correct, Some(m.executable));
        for c in m.classes.iter().chain(&m.overall) {
            assert_eq!(c.original.len(), c.patched.len());
            if c.eligible {
                assert_eq!(c.original.len(), m.rounds);
            }
            for &x in c.original.iter().chain(&c.patched) {
                etip_fuzz::check_time("measurements_jsonl", x);
            }
        }
        // Written back and read again, the record is the same (non-finite statistics included,
        // which is why the comparison is on the JSON text).
        let json = serde_json::to_string(m).expect("a measurement serialises");
        let back: Measurement =
            serde_json::from_str(&json).expect("a written measurement reads back");
        let again = serde_json::to_string(&back).expect("a measurement serialises");
        assert_eq!(json, again, "measurement changed in a JSON round trip");
    }
});
