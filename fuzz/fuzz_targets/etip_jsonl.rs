//! etip task-result JSON Lines (`etip.task-result`) through `etip_score::input::load_file`
//! (scratch file `*.jsonl`; a file whose first object is a measurement is read as measurements).
#![no_main]

use etip_records::results::TaskResult;
use etip_score::input::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(sub) = etip_fuzz::load_score("etip_jsonl", "results.jsonl", data) else {
        return;
    };
    assert!(
        matches!(sub.format, Format::EtipJsonl | Format::EtipMeasurements),
        "a .jsonl file read as {:?}",
        sub.format
    );
    assert_eq!(sub.name, "results");
    // One task per non-blank line: the reader never skips or merges lines silently.
    let text = etip_fuzz::text_as_read(data).expect("a file that was read is UTF-8");
    let lines = etip_fuzz::non_blank_lines(text);
    assert_eq!(
        sub.tasks.len(),
        lines,
        "tasks and non-blank lines differ in number"
    );
    if sub.format != Format::EtipJsonl {
        return;
    }
    // What was read is written back and read again unchanged (finite numbers, exact round trip).
    for t in &sub.tasks {
        let json = serde_json::to_string(t).expect("a task result serialises");
        let back: TaskResult =
            serde_json::from_str(&json).expect("a written task result reads back");
        assert_eq!(&back, t, "task result changed in a JSON round trip: {json}");
    }
});
