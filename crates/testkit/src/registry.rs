//! A real container registry for the tests (Debian's `docker-registry`, Distribution 2.8) on a
//! free port of 127.0.0.1, storing in a temporary folder; stopped when dropped. The Docker engine
//! accepts registries on 127.0.0.1 without TLS.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `docker-registry` serving `storage` on `addr` (deletes allowed), its configuration
/// written to `config`; panics with how to install it when it is missing. Several may serve one
/// storage (the test cluster's registry has a loopback name and a cluster-network name).
pub(crate) fn spawn(config: &std::path::Path, storage: &std::path::Path, addr: &str) -> Child {
    std::fs::write(
        config,
        format!(
            "version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {addr}\n",
            storage.display()
        ),
    )
    .expect("writing the registry's configuration");
    Command::new("docker-registry")
        .arg("serve")
        .arg(config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "starting docker-registry: {e} (scripts/test.sh installs Debian's docker-registry)"
            )
        })
}

pub struct Registry {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Registry {
    /// Starts the registry; panics with how to install it when `docker-registry` is missing.
    pub fn start() -> Registry {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = spawn(
            &dir.path().join("config.yml"),
            &dir.path().join("data"),
            &format!("127.0.0.1:{port}"),
        );
        let r = Registry {
            child,
            port,
            _dir: dir,
        };
        let start = Instant::now();
        while r.get("/v2/").0 != 200 {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the registry on port {port} did not answer within 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        r
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Status and headers of `HEAD`/`GET` `path` (status 0 when the registry does not answer).
    fn request(&self, method: &str, path: &str, accept: &str) -> (u16, String) {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return (0, String::new());
        };
        let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAccept: {accept}\r\nConnection: close\r\n\r\n",
            self.port
        );
        if s.write_all(req.as_bytes()).is_err() {
            return (0, String::new());
        }
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        (status, text)
    }

    fn get(&self, path: &str) -> (u16, String) {
        self.request("GET", path, "*/*")
    }

    /// The digest the registry holds for `repo:tag`'s manifest (`sha256:...`), if it holds one.
    pub fn manifest_digest(&self, repo: &str, tag: &str) -> Option<String> {
        let (status, text) = self.request(
            "HEAD",
            &format!("/v2/{repo}/manifests/{tag}"),
            "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json",
        );
        if status != 200 {
            return None;
        }
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("docker-content-digest")
                .then(|| v.trim().to_string())
        })
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_answers_holds_nothing_at_first_and_stops_when_dropped() {
        let r = Registry::start();
        let host = r.host();
        assert_eq!(r.get("/v2/").0, 200);
        assert_eq!(r.manifest_digest("etip/none", "x"), None);
        drop(r);
        let start = Instant::now();
        while TcpStream::connect(&host).is_ok() {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{host} still answers"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
