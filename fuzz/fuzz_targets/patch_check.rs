//! Prediction patches (`etip_eval::patch::check`): any text as a unified diff, for both
//! languages, with and without test changes allowed.
#![no_main]

use etip_core::Language;
use etip_eval::patch::{PatchProblem, check};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for lang in [Language::Java, Language::Python] {
        let strict = check(lang, text, false);
        let lax = check(lang, text, true);
        match &lax {
            Ok(v) => {
                assert!(!v.files.is_empty());
                for p in v.files.iter().flat_map(|f| f.paths()) {
                    assert!(!p.starts_with('/') && !p.is_empty(), "path {p:?}");
                    assert!(!p.split('/').any(|c| c == ".." || c == ".git"), "path {p:?}");
                }
                // Allowing test changes only lets protected paths through.
                match &strict {
                    Ok(s) => assert!(s.allowed_protected.is_empty() && v.allowed_protected.is_empty()),
                    Err(PatchProblem::Protected { paths }) => assert_eq!(paths, &v.allowed_protected),
                    Err(e) => panic!("strict {e} where lax accepted"),
                }
            }
            Err(e) => {
                etip_fuzz::check_error("patch_check", &e.to_string());
                assert!(!matches!(e, PatchProblem::Protected { .. }), "lax refused protected paths");
                assert_eq!(strict.as_ref().err(), Some(e), "strict and lax differ on {e}");
            }
        }
    }
});
