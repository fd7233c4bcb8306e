//! The configuration file (`etip config init`): one commented file for the commands that read
//! one — the build settings (`etip build`, `measure`, `select`, `eval` and `eval-test` take it
//! with `--config`) and `[mine.github]` (`etip mine github --config`). Every value is the
//! default, so the file changes nothing until a key is edited.

use std::path::Path;

use crate::InputError;

/// The whole file: the build settings as `etip build --print-config` prints them (with what
/// `"auto"` finds on this machine in comments), then `[mine.github]`.
pub fn default_text() -> String {
    let build =
        etip_build::config::BuildConfig::default().to_toml_with(Some(&etip_build::network::host()));
    format!(
        "# etip configuration, written by `etip config init`; every value is the default.\n\
         # The build settings are read by `etip build`, `measure`, `select`, `eval` and\n\
         # `eval-test` (`--config etip.toml`); `[mine.github]` by `etip mine github`;\n\
         # `[swarm]` by `--backend swarm`.\n\n\
         {build}{}{}",
        crate::mine::github::CONFIG_SECTION,
        crate::swarm::CONFIG_SECTION
    )
}

/// Writes the default configuration to `out`; an existing file is replaced only with `force`
/// (and only a regular file ever is).
pub fn init(out: &Path, force: bool) -> anyhow::Result<()> {
    if out.exists() && !force {
        return Err(InputError(format!(
            "{} exists; pass --force to replace it",
            out.display()
        ))
        .into());
    }
    crate::output::write(out, &default_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file reads back: the build ignores `[mine]`, and `[mine.github]` holds what
    /// `etip mine github` knows.
    #[test]
    fn the_default_file_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("etip.toml");
        std::fs::write(&path, default_text()).unwrap();
        let build = etip_build::config::BuildConfig::load(&path).unwrap();
        assert_eq!(build.namespace, "etip");
        let table: toml::Table = toml::from_str(&default_text()).unwrap();
        let github = &table["mine"]["github"];
        assert_eq!(github["min_stars"].as_integer(), Some(100));
        assert_eq!(github["build_tools"].as_str(), Some("strict"));
    }
}
