//! Build configuration TOML (`etip_build::config::BuildConfig`): what `BuildConfig::load` does after
//! reading the file (`toml::from_str`, then `validate`), its errors as `load` reports them, and the
//! `to_toml` round trip.
#![no_main]

use etip_build::config::{BuildConfig, ConfigError};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match toml::from_str::<BuildConfig>(text) {
        Ok(cfg) => {
            match cfg.validate() {
                Ok(()) => {
                    // What validation promises to the engine calls.
                    assert!(cfg.build_cpus.is_finite() && cfg.build_cpus >= 0.0);
                    assert!(cfg.timeout_secs >= 1);
                    assert!(cfg.build_memory_mb >= etip_build::config::MIN_MEMORY_MB);
                    assert!(etip_build::config::is_repository_path(&cfg.namespace));
                    assert!(etip_build::config::is_repository_path(
                        &cfg.bootstrap.repository
                    ));
                    assert!(etip_build::config::is_tag(&cfg.bootstrap.suite));
                }
                Err(source) => {
                    assert!(!source.problems.is_empty(), "invalid without a problem");
                    let e = ConfigError::Invalid {
                        path: "etip-build.toml".into(),
                        source,
                    };
                    etip_fuzz::check_error("build_config_toml validate", &e.to_string());
                }
            }
            // `etip build --print-config` output of any accepted configuration reads back, and
            // printing is then stable (compared as text: build_cpus may be NaN).
            let printed = cfg.to_toml();
            let back: BuildConfig = toml::from_str(&printed)
                .unwrap_or_else(|e| panic!("to_toml output does not read back: {e}\n{printed}"));
            assert_eq!(back.to_toml(), printed, "to_toml is not stable");
        }
        Err(source) => {
            let e = ConfigError::Parse {
                path: "etip-build.toml".into(),
                source,
            };
            etip_fuzz::check_error("build_config_toml", &e.to_string());
        }
    }
});
