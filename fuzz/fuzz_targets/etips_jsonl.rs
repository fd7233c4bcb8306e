//! `etips.jsonl` / `candidates.jsonl`: `etip_build::EtipInput::read_jsonl` (what `etip build`
//! reads; path-based, so through a scratch file) and, line by line, the miner's
//! `etip_core::candidate::Candidate` record (serde, as `etip mine` reads its own lines back).
#![no_main]

use etip_build::EtipInput;
use etip_core::candidate::Candidate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        // read_jsonl refuses non-UTF-8 with an I/O error; check it stays an error.
        let path = etip_fuzz::write_scratch("in/etips.jsonl", data);
        let e = EtipInput::read_jsonl(&path).expect_err("non-UTF-8 read as ETIPs");
        etip_fuzz::check_error("etips_jsonl", &e.to_string());
        return;
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Candidate>(line) {
            Ok(c) => {
                let json = serde_json::to_string(&c).expect("a candidate serialises");
                let back: Candidate =
                    serde_json::from_str(&json).expect("a written candidate reads back");
                assert_eq!(back, c, "candidate changed in a JSON round trip: {json}");
            }
            // A raw serde_json error (the miner wraps it in its own): only non-empty is promised.
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    let path = etip_fuzz::write_scratch("in/etips.jsonl", data);
    match EtipInput::read_jsonl(&path) {
        Ok(etips) => {
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            assert_eq!(
                etips.len(),
                lines,
                "ETIPs and non-blank lines differ in number"
            );
            let mut ids = std::collections::BTreeSet::new();
            for e in &etips {
                assert!(ids.insert(e.id.as_str()), "ETIP id {:?} twice", e.id);
                assert_eq!(e.problem(), None, "an ETIP read with a problem");
                assert!(
                    e.source.is_some(),
                    "ETIP {:?} read without a source (read_jsonl fills it from repo)",
                    e.id
                );
            }
        }
        Err(e) => etip_fuzz::check_error("etips_jsonl", &e.to_string()),
    }
});
