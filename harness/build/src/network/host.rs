//! What `"auto"` finds: the host's package index, mirror, proxy and CA settings, read by pure
//! functions from its environment variables and the text of its configuration files
//! ([`detect`]); [`host`] reads the real ones.
//!
//! | key | looked up, first found wins |
//! |---|---|
//! | `pip_index_url` | `PIP_INDEX_URL`; pip's files: `index-url` |
//! | `pip_extra_index_urls` | `PIP_EXTRA_INDEX_URL` (blank-separated); `extra-index-url` |
//! | `pip_trusted_hosts` | `PIP_TRUSTED_HOST` (blank-separated); `trusted-host` |
//! | `maven_mirror_url` | `~/.m2/settings.xml`: the first `<mirror>` whose `<mirrorOf>` names `*`, `external:*` or `central`, with the `<server>` of the same id's plain username and password |
//! | `http_proxy`, `https_proxy` | `http_proxy`, `HTTP_PROXY` (`https_…` alike); `~/.m2/settings.xml`: the first active `<proxy>` of that protocol |
//! | `no_proxy` | `no_proxy`, `NO_PROXY`; that proxy's `<nonProxyHosts>` |
//! | `ca_bundle` | `PIP_CERT`; pip's files: `cert`; `REQUESTS_CA_BUNDLE`; `SSL_CERT_FILE` |
//!
//! pip's files, highest precedence first (as pip reads them): `$PIP_CONFIG_FILE` (when it
//! exists, the user files are skipped), `$XDG_CONFIG_HOME/pip/pip.conf` (default
//! `~/.config/pip/pip.conf`), `~/.pip/pip.conf`, `/etc/pip.conf`, `/etc/xdg/pip/pip.conf`; in
//! each, section `[install]` before `[global]`, key names with `_` or `-`. Values that are not
//! usable (not an http(s) URL, a password Maven keeps encrypted) are left out with a note.

use super::{is_http_url, is_no_proxy, is_trusted_host};
use std::collections::BTreeMap;

/// A value found on the host and where it was found.
#[derive(Clone, PartialEq, Eq)]
pub struct Found<T> {
    pub value: T,
    pub source: String,
}

impl<T: std::fmt::Debug> std::fmt::Debug for Found<T> {
    /// The source only: the value may hold credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Found(from {})", self.source)
    }
}

/// What `"auto"` means on a host (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostNetwork {
    pub pip_index_url: Option<Found<String>>,
    pub pip_extra_index_urls: Option<Found<Vec<String>>>,
    pub pip_trusted_hosts: Option<Found<Vec<String>>>,
    pub maven_mirror_url: Option<Found<String>>,
    pub http_proxy: Option<Found<String>>,
    pub https_proxy: Option<Found<String>>,
    pub no_proxy: Option<Found<String>>,
    pub ca_bundle: Option<Found<String>>,
    /// Settings found but not usable, and why.
    pub notes: Vec<String>,
}

/// The host's settings: its environment and files (each read up to 1 MiB).
pub fn host() -> HostNetwork {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let read =
        |p: &str| etip_core::bounded::read_to_string_capped(std::path::Path::new(p), 1 << 20).ok();
    detect(&env, &read)
}

/// A pip configuration file: `(section, key) -> value` with normalised names.
type PipFile = BTreeMap<(String, String), String>;

/// Parses pip's INI files: `[section]`, `key = value` or `key: value`, indented continuation
/// lines, `#`/`;` comments; names lower-case with `_` as `-`.
fn parse_pip_conf(text: &str) -> PipFile {
    let mut out = PipFile::new();
    let mut section = String::new();
    let mut last: Option<(String, String)> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if let Some(k) = &last
                && let Some(v) = out.get_mut(k)
            {
                v.push('\n');
                v.push_str(trimmed);
            }
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            section = name.trim().to_lowercase();
            last = None;
            continue;
        }
        let Some(at) = trimmed.find(['=', ':']) else {
            continue;
        };
        let key = trimmed[..at].trim().to_lowercase().replace('_', "-");
        let k = (section.clone(), key);
        out.insert(k.clone(), trimmed[at + 1..].trim().to_string());
        last = Some(k);
    }
    out
}

/// pip's files in precedence order, highest first: `(path, parsed)` of those that could be read.
fn pip_files(
    env: &BTreeMap<String, String>,
    read: &dyn Fn(&str) -> Option<String>,
) -> Vec<(String, PipFile)> {
    let var = |k: &str| env.get(k).filter(|v| !v.is_empty()).cloned();
    let home = var("HOME").unwrap_or_else(|| "/root".into());
    let mut files = Vec::new();
    let mut user = true;
    if let Some(p) = var("PIP_CONFIG_FILE")
        && let Some(text) = read(&p)
    {
        files.push((p, parse_pip_conf(&text)));
        user = false;
    }
    let xdg = var("XDG_CONFIG_HOME").unwrap_or_else(|| format!("{home}/.config"));
    let mut paths = Vec::new();
    if user {
        paths.push(format!("{xdg}/pip/pip.conf"));
        paths.push(format!("{home}/.pip/pip.conf"));
    }
    paths.push("/etc/pip.conf".into());
    paths.push("/etc/xdg/pip/pip.conf".into());
    for p in paths {
        if let Some(text) = read(&p) {
            files.push((p, parse_pip_conf(&text)));
        }
    }
    files
}

/// The first value of pip option `key` in `files` (`[install]` before `[global]` in each).
fn pip_option(files: &[(String, PipFile)], key: &str) -> Option<Found<String>> {
    for (path, f) in files {
        for section in ["install", "global"] {
            if let Some(v) = f.get(&(section.to_string(), key.to_string()))
                && !v.trim().is_empty()
            {
                return Some(Found {
                    value: v.trim().to_string(),
                    source: format!("{path} [{section}] {key}"),
                });
            }
        }
    }
    None
}

/// The environment variable `names` first set (non-empty).
fn env_var(env: &BTreeMap<String, String>, names: &[&str]) -> Option<Found<String>> {
    names.iter().find_map(|n| {
        env.get(*n)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
            .map(|v| Found {
                value: v.to_string(),
                source: format!("${n}"),
            })
    })
}

/// Keeps `found` when `ok` accepts it, else notes why it is left out.
fn usable<T>(
    found: Option<Found<T>>,
    key: &str,
    ok: impl Fn(&T) -> bool,
    notes: &mut Vec<String>,
) -> Option<Found<T>> {
    let f = found?;
    if ok(&f.value) {
        Some(f)
    } else {
        notes.push(format!(
            "{key} from {} is not usable and left out",
            f.source
        ));
        None
    }
}

fn words(f: Found<String>) -> Found<Vec<String>> {
    Found {
        value: f.value.split_whitespace().map(str::to_string).collect(),
        source: f.source,
    }
}

/// The host's settings from its environment variables `env` and the files `read` returns
/// (`None`: absent or unreadable). See the module documentation.
pub fn detect(
    env: &BTreeMap<String, String>,
    read: &dyn Fn(&str) -> Option<String>,
) -> HostNetwork {
    let files = pip_files(env, read);
    let pip = |var: &str, key: &str| env_var(env, &[var]).or_else(|| pip_option(&files, key));
    let home = env
        .get("HOME")
        .filter(|h| !h.is_empty())
        .cloned()
        .unwrap_or_else(|| "/root".into());
    let m2_path = format!("{home}/.m2/settings.xml");
    let m2 = read(&m2_path)
        .map(|t| super::maven::read_settings(&t, &m2_path))
        .unwrap_or_default();
    let mut notes = m2.notes;
    let proxy = |names: &[&str], from_m2: Option<Found<String>>| env_var(env, names).or(from_m2);
    let urls = |v: &Vec<String>| v.iter().all(|u| is_http_url(u));
    let hosts = |v: &Vec<String>| v.iter().all(|h| is_trusted_host(h));
    let ca = env_var(env, &["PIP_CERT"])
        .or_else(|| pip_option(&files, "cert"))
        .or_else(|| env_var(env, &["REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"]));
    let proxy_ok = |u: &String| super::is_proxy_url(u);
    HostNetwork {
        pip_index_url: usable(
            pip("PIP_INDEX_URL", "index-url"),
            "pip_index_url",
            |u| is_http_url(u),
            &mut notes,
        ),
        pip_extra_index_urls: usable(
            pip("PIP_EXTRA_INDEX_URL", "extra-index-url").map(words),
            "pip_extra_index_urls",
            urls,
            &mut notes,
        ),
        pip_trusted_hosts: usable(
            pip("PIP_TRUSTED_HOST", "trusted-host").map(words),
            "pip_trusted_hosts",
            hosts,
            &mut notes,
        ),
        maven_mirror_url: usable(
            m2.mirror,
            "maven_mirror_url",
            |u| is_http_url(u),
            &mut notes,
        ),
        http_proxy: usable(
            proxy(&["http_proxy", "HTTP_PROXY"], m2.http_proxy),
            "http_proxy",
            proxy_ok,
            &mut notes,
        ),
        https_proxy: usable(
            proxy(&["https_proxy", "HTTPS_PROXY"], m2.https_proxy),
            "https_proxy",
            proxy_ok,
            &mut notes,
        ),
        no_proxy: usable(
            proxy(&["no_proxy", "NO_PROXY"], m2.no_proxy),
            "no_proxy",
            |v| is_no_proxy(v),
            &mut notes,
        ),
        ca_bundle: ca,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn files(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |p| {
            pairs
                .iter()
                .find(|(path, _)| *path == p)
                .map(|(_, t)| t.to_string())
        }
    }

    #[test]
    fn nothing_set_finds_nothing() {
        let h = detect(&env(&[("HOME", "/home/u")]), &files(&[]));
        assert_eq!(h, HostNetwork::default());
    }

    #[test]
    fn variables_win_over_files_and_lowercase_proxies_over_uppercase() {
        let h = detect(
            &env(&[
                ("HOME", "/home/u"),
                ("PIP_INDEX_URL", "https://u:tok@idx.example/simple/"),
                (
                    "PIP_EXTRA_INDEX_URL",
                    "https://a.example/simple https://b.example/simple",
                ),
                ("PIP_TRUSTED_HOST", "a.example b.example:8080"),
                ("http_proxy", "http://lower:3128"),
                ("HTTP_PROXY", "http://upper:3128"),
                ("HTTPS_PROXY", "http://p:pw@upper:3128"),
                ("NO_PROXY", "localhost,.corp"),
                ("REQUESTS_CA_BUNDLE", "/etc/ssl/req.pem"),
                ("SSL_CERT_FILE", "/etc/ssl/ssl.pem"),
            ]),
            &files(&[(
                "/etc/pip.conf",
                "[global]\nindex-url = https://conf.example/simple/\ncert = /etc/ssl/pip.pem\n",
            )]),
        );
        let v = |f: &Option<Found<String>>| f.as_ref().map(|f| f.value.clone());
        assert_eq!(
            v(&h.pip_index_url).unwrap(),
            "https://u:tok@idx.example/simple/"
        );
        assert_eq!(h.pip_index_url.as_ref().unwrap().source, "$PIP_INDEX_URL");
        assert_eq!(h.pip_extra_index_urls.as_ref().unwrap().value.len(), 2);
        assert_eq!(
            h.pip_trusted_hosts.as_ref().unwrap().value,
            ["a.example", "b.example:8080"]
        );
        assert_eq!(v(&h.http_proxy).unwrap(), "http://lower:3128");
        assert_eq!(v(&h.https_proxy).unwrap(), "http://p:pw@upper:3128");
        assert_eq!(v(&h.no_proxy).unwrap(), "localhost,.corp");
        // pip's own `cert` comes before the generic variables.
        assert_eq!(v(&h.ca_bundle).unwrap(), "/etc/ssl/pip.pem");
        assert_eq!(
            h.ca_bundle.as_ref().unwrap().source,
            "/etc/pip.conf [global] cert"
        );
    }

    /// This project's machine: `PIP_CERT` and `/etc/pip.conf`'s `cert` name the host bundle that
    /// holds the intercepting proxy's CA; nothing else is set.
    #[test]
    fn this_machines_settings() {
        let h = detect(
            &env(&[
                ("HOME", "/root"),
                ("PIP_CERT", "/etc/ssl/certs/ca-certificates.crt"),
                ("REQUESTS_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt"),
                ("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt"),
                ("PIP_FIND_LINKS", "/opt/wheels"),
            ]),
            &files(&[(
                "/etc/pip.conf",
                "[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n",
            )]),
        );
        let ca = h.ca_bundle.clone().unwrap();
        assert_eq!(ca.value, "/etc/ssl/certs/ca-certificates.crt");
        assert_eq!(ca.source, "$PIP_CERT");
        assert_eq!(
            HostNetwork {
                ca_bundle: None,
                ..h
            },
            HostNetwork::default()
        );
    }

    #[test]
    fn pip_files_follow_pips_precedence() {
        let conf = "[global]\nindex_url = https://global.example/simple/\n\
                    extra-index-url =\n    https://x.example/simple\n    https://y.example/simple\n\
                    [install]\nindex-url: https://install.example/simple/\n; comment\n";
        let h = detect(
            &env(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/xdg")]),
            &files(&[
                (
                    "/xdg/pip/pip.conf",
                    "[global]\ntrusted-host = user.example\n",
                ),
                (
                    "/home/u/.pip/pip.conf",
                    "[global]\ntrusted-host = legacy.example\n",
                ),
                (
                    "/etc/pip.conf",
                    "[global]\nindex-url = https://etc.example/simple/\n",
                ),
            ]),
        );
        assert_eq!(h.pip_trusted_hosts.unwrap().value, ["user.example"]);
        assert_eq!(
            h.pip_index_url.unwrap().value,
            "https://etc.example/simple/"
        );
        // $PIP_CONFIG_FILE first; when it exists the user files are not read.
        let read = move |p: &str| match p {
            "/cfg/pip.ini" => Some(conf.to_string()),
            "/home/u/.pip/pip.conf" => Some("[global]\ntrusted-host = legacy.example\n".into()),
            _ => None,
        };
        let h = detect(
            &env(&[("HOME", "/home/u"), ("PIP_CONFIG_FILE", "/cfg/pip.ini")]),
            &read,
        );
        let idx = h.pip_index_url.unwrap();
        assert_eq!(idx.value, "https://install.example/simple/");
        assert_eq!(idx.source, "/cfg/pip.ini [install] index-url");
        assert_eq!(
            h.pip_extra_index_urls.unwrap().value,
            ["https://x.example/simple", "https://y.example/simple"]
        );
        assert!(h.pip_trusted_hosts.is_none());
    }

    #[test]
    fn maven_settings_give_mirror_and_proxies() {
        let settings = r#"<settings>
          <servers>
            <server><id>corp</id><username>mvn</username><password>p&amp;w:d</password></server>
          </servers>
          <mirrors>
            <mirror><id>other</id><mirrorOf>jboss</mirrorOf><url>https://jboss.example/</url></mirror>
            <mirror><id>corp</id><mirrorOf>external:*,!snap</mirrorOf><url>https://nexus.example/maven2/</url></mirror>
          </mirrors>
          <proxies>
            <proxy><id>off</id><active>false</active><protocol>http</protocol><host>old</host><port>1</port></proxy>
            <proxy><id>p</id><protocol>http</protocol><host>proxy.corp</host><port>3128</port>
              <username>pu</username><password>ppw</password><nonProxyHosts>localhost|*.corp</nonProxyHosts></proxy>
          </proxies>
        </settings>"#;
        let read = move |p: &str| (p == "/home/u/.m2/settings.xml").then(|| settings.to_string());
        let h = detect(&env(&[("HOME", "/home/u")]), &read);
        let mirror = h.maven_mirror_url.unwrap();
        assert_eq!(mirror.value, "https://mvn:p%26w%3Ad@nexus.example/maven2/");
        assert_eq!(mirror.source, "/home/u/.m2/settings.xml mirror corp");
        assert_eq!(h.http_proxy.unwrap().value, "http://pu:ppw@proxy.corp:3128");
        assert!(h.https_proxy.is_none());
        assert_eq!(h.no_proxy.unwrap().value, "localhost,.corp");
        // The environment wins over the settings.
        let h = detect(
            &env(&[("HOME", "/home/u"), ("HTTP_PROXY", "http://envproxy:8080")]),
            &read,
        );
        assert_eq!(h.http_proxy.unwrap().value, "http://envproxy:8080");
    }

    #[test]
    fn unusable_values_are_left_out_with_a_note() {
        let settings = "<settings><servers><server><id>m</id><username>u</username>\
            <password>{COQLCE6DU6GtcS5P=}</password></server></servers><mirrors><mirror><id>m</id>\
            <mirrorOf>*</mirrorOf><url>https://m.example/</url></mirror></mirrors></settings>";
        let read = move |p: &str| (p == "/h/.m2/settings.xml").then(|| settings.to_string());
        let h = detect(
            &env(&[
                ("HOME", "/h"),
                ("PIP_INDEX_URL", "/local/folder"),
                ("http_proxy", "socks5://x:1080"),
            ]),
            &read,
        );
        assert!(h.pip_index_url.is_none() && h.http_proxy.is_none());
        // An encrypted password is not used: the mirror comes without credentials.
        assert_eq!(h.maven_mirror_url.unwrap().value, "https://m.example/");
        let notes = h.notes.join("\n");
        for word in ["pip_index_url", "http_proxy", "encrypted"] {
            assert!(notes.contains(word), "{word}: {notes}");
        }
    }
}
