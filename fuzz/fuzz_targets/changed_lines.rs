//! The changed code of a file's two versions (`etip_select::changes`): the input split at
//! its first NUL into the original and the patched text; the changed lines, anchors and the
//! functions holding them must lie in the texts.
#![no_main]

use etip_select::changes::{Range, changed_functions, line_changes};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (a, b) = text.split_once('\0').unwrap_or((&text, ""));
    let c = line_changes(Some(a), Some(b));
    // Lines end at \n, \r\n or a lone \r, as Python's tokenizer, javac and the diff count them.
    let count = |t: &str| t.replace("\r\n", "\n").replace('\r', "\n").lines().count() as u32;
    let (na, nb) = (count(a), count(b));
    assert!(c.original.iter().all(|l| (1..=na).contains(l)), "original line outside the text");
    assert!(c.patched.iter().all(|l| (1..=nb).contains(l)), "patched line outside the text");
    assert!(c.original_anchors.iter().all(|l| *l >= 1 && *l <= na.max(1)));
    assert!(c.patched_anchors.iter().all(|l| *l >= 1 && *l <= nb + 1));
    if a == b {
        assert!(c.original.is_empty() && c.patched.is_empty(), "equal texts with changes");
    }
    // Ranges from the bytes themselves: every changed line maps to a range holding it, or to the
    // module.
    let ranges: Vec<Range> = data
        .chunks(2)
        .enumerate()
        .map(|(i, w)| {
            let first = u32::from(w[0]).max(1);
            let last = first + u32::from(*w.get(1).unwrap_or(&0));
            Range {
                name: format!("f{i}"),
                first,
                last,
            }
        })
        .collect();
    let funcs = changed_functions(&ranges, c.original.iter().copied(), "mod");
    for (name, range) in &funcs {
        match range {
            Some(r) => assert!(c.original.iter().any(|l| r.contains(*l)), "{name} holds no changed line"),
            None => assert_eq!(name, "mod"),
        }
    }
});
