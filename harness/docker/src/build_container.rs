//! What a layer's build container gets that its image must never keep ([`BuildContainer`]):
//! the network it is attached to, environment variables and files under `/tmp`.
//!
//! [`Engine::build_layer_in`](crate::Engine::build_layer_in) creates the build container with
//! these and makes the image config from the *parent image's* config (see [`crate::layer`]), never
//! from the container's, so the variables are not in the image's `Env`, its labels or its history
//! (whose entry is the layer's command, [`LayerSpec::cmd`](crate::LayerSpec::cmd)). The files are
//! uploaded with the build context before the container starts; the wrapper's walk of the
//! filesystem skips `/tmp` ([`crate::layer::WRAPPER`]), so no file under it is archived into the
//! layer (and a layer with capture roots may not name `/tmp` or a folder under it). That is how
//! credentials (a proxy password, an index URL with a token) reach a download and nothing else.

use crate::{PackError, SetupError};

/// The folder every [`TmpFile`] lives under.
pub const TMP: &str = "/tmp/";

/// A file put into the build container before its command runs, under [`TMP`].
#[derive(Clone, PartialEq, Eq)]
pub struct TmpFile {
    /// Absolute path under `/tmp/` (no `.` or `..` components).
    pub path: String,
    pub data: Vec<u8>,
    pub mode: u32,
}

impl std::fmt::Debug for TmpFile {
    /// The path and size only: the data may hold credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TmpFile({}, {} bytes)", self.path, self.data.len())
    }
}

/// Settings of a layer's build container only (see the module documentation).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct BuildContainer {
    /// The Docker network of a build whose [`LayerSpec::network_enabled`](crate::LayerSpec) is
    /// set: a user-defined network's name; `None` is Docker's default `bridge`. Ignored (network
    /// `none`) when the spec has no network.
    pub network: Option<String>,
    /// `NAME=value` entries added to the build container's environment.
    pub env: Vec<String>,
    /// Files put under `/tmp` before the command runs.
    pub files: Vec<TmpFile>,
}

impl std::fmt::Debug for BuildContainer {
    /// Names only: values and file contents may hold credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .env
            .iter()
            .map(|e| e.split_once('=').map_or(e.as_str(), |(n, _)| n))
            .collect();
        f.debug_struct("BuildContainer")
            .field("network", &self.network)
            .field("env", &names)
            .field("files", &self.files)
            .finish()
    }
}

/// A user-defined Docker network's name as the engine accepts it
/// (`[a-zA-Z0-9][a-zA-Z0-9_.-]+`, at most 128 characters).
pub fn is_network_name(s: &str) -> bool {
    let mut chars = s.chars();
    s.len() >= 2
        && s.len() <= 128
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

impl BuildContainer {
    /// The network mode of a build container: `none` without network, else the configured
    /// network or `bridge`.
    pub fn network_mode(&self, network_enabled: bool) -> &str {
        match (&self.network, network_enabled) {
            (_, false) => "none",
            (Some(n), true) => n,
            (None, true) => "bridge",
        }
    }

    /// Checks the network name, the variables' names and that every file lies under `/tmp/` and
    /// outside the layer's capture roots (`capture`, absolute folders).
    pub fn check(&self, capture: &[String]) -> Result<(), SetupError> {
        if let Some(n) = &self.network
            && !is_network_name(n)
        {
            return Err(SetupError::NetworkName { name: n.clone() });
        }
        for e in &self.env {
            let name = e.split_once('=').map_or("", |(n, _)| n);
            let ok = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !e.contains('\0');
            if !ok {
                return Err(SetupError::Variable { name: name.into() });
            }
        }
        for f in &self.files {
            let rel = f.path.strip_prefix(TMP).unwrap_or("");
            let ok = !rel.is_empty()
                && !rel.ends_with('/')
                && rel
                    .split('/')
                    .all(|c| !c.is_empty() && c != "." && c != ".." && !c.contains('\0'));
            if !ok {
                return Err(SetupError::FilePath {
                    path: f.path.clone(),
                });
            }
            for root in capture {
                let root = root.trim_end_matches('/');
                if f.path.starts_with(&format!("{root}/")) {
                    return Err(SetupError::FileUnderRoot {
                        path: f.path.clone(),
                        root: root.into(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The folders between `/tmp` and the files, outermost first (without `/tmp` itself, whose
    /// mode the upload must not change), relative to `/`.
    pub(crate) fn folders(&self) -> Vec<String> {
        let mut dirs: Vec<String> = Vec::new();
        for f in &self.files {
            let rel = f.path.trim_start_matches('/');
            let parts: Vec<&str> = rel.split('/').collect();
            for end in 2..parts.len() {
                let d = format!("{}/", parts[..end].join("/"));
                if !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
        dirs
    }

    /// A tar of the files and their folders (see [`BuildContainer::folders`]), to extract at `/`.
    pub(crate) fn files_tar(&self) -> Result<Vec<u8>, PackError> {
        let mut b = tar::Builder::new(Vec::new());
        let mut add = |path: &str, data: &[u8], mode: u32, kind: tar::EntryType| {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(kind);
            h.set_size(data.len() as u64);
            h.set_mode(mode);
            h.set_cksum();
            b.append_data(&mut h, path, data)
                .map_err(|source| PackError::Entry {
                    path: path.into(),
                    source,
                })
        };
        for dir in self.folders() {
            add(&dir, &[], 0o755, tar::EntryType::Directory)?;
        }
        for f in &self.files {
            add(
                f.path.trim_start_matches('/'),
                &f.data,
                f.mode,
                tar::EntryType::Regular,
            )?;
        }
        b.into_inner()
            .map_err(|source| PackError::Archive { source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> TmpFile {
        TmpFile {
            path: path.into(),
            data: b"secret".to_vec(),
            mode: 0o644,
        }
    }

    #[test]
    fn files_must_lie_under_tmp_and_outside_capture_roots() {
        let ok = BuildContainer {
            network: Some("etip-mirror_1.net".into()),
            env: vec!["PIP_INDEX_URL=http://u:p@h/simple/".into(), "EMPTY=".into()],
            files: vec![file("/tmp/etip-net/ca.pem"), file("/tmp/x")],
        };
        ok.check(&["/work".into(), "/opt/etip".into()]).unwrap();
        assert_eq!(ok.folders(), vec!["tmp/etip-net/".to_string()]);
        for bad in [
            "/etc/pip.conf",
            "/tmp/",
            "/tmp/a/../../etc/x",
            "/tmp//x",
            "tmp/x",
            "/tmpx/y",
            "/tmp/d/",
        ] {
            let bc = BuildContainer {
                files: vec![file(bad)],
                ..Default::default()
            };
            assert!(bc.check(&[]).is_err(), "{bad}");
        }
        let bc = BuildContainer {
            files: vec![file("/tmp/etip-net/ca.pem")],
            ..Default::default()
        };
        assert!(bc.check(&["/tmp".into()]).is_err());
        assert!(bc.check(&["/tmp/etip-net/".into()]).is_err());
    }

    #[test]
    fn names_are_checked_and_secrets_not_printed() {
        for bad in ["a", "-x", "my net", "host:x", ""] {
            assert!(!is_network_name(bad), "{bad}");
        }
        assert!(is_network_name("etiptest-net-42") && is_network_name("b2"));
        let bc = BuildContainer {
            network: Some("bad name".into()),
            ..Default::default()
        };
        assert!(bc.check(&[]).is_err());
        let bc = BuildContainer {
            env: vec!["=x".into()],
            ..Default::default()
        };
        assert!(bc.check(&[]).is_err());
        let bc = BuildContainer {
            network: None,
            env: vec!["HTTP_PROXY=http://u:hunter2@proxy:3128".into()],
            files: vec![file("/tmp/s")],
        };
        let shown = format!("{bc:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("secret"),
            "{shown}"
        );
        assert!(shown.contains("HTTP_PROXY"), "{shown}");
        assert_eq!(bc.network_mode(false), "none");
        assert_eq!(bc.network_mode(true), "bridge");
        let named = BuildContainer {
            network: Some("n1".into()),
            ..Default::default()
        };
        assert_eq!(named.network_mode(true), "n1");
        assert_eq!(named.network_mode(false), "none");
    }
}
