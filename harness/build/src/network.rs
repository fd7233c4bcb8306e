//! Online and offline: the env layer's network and where its downloads go.
//!
//! The env layer's build container gets a network (`env_network`: Docker's `bridge` by default,
//! or a user-defined network such as a mirror container's); the instance layer and every test run
//! get none. The `[network]` section ([`NetworkConfig`]) says where downloads go; `"auto"` takes
//! what the host uses ([`host`], see [`host::detect`] for where it looks). The settings reach
//! the env layer's build container only ([`env_container`]):
//!
//! - variables at its creation: `PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`, `PIP_TRUSTED_HOST` (with
//!   the host of every `http://` index: pip ignores plain-HTTP indexes of untrusted hosts),
//!   `HTTP_PROXY`/`http_proxy`, `HTTPS_PROXY`/`https_proxy`, `NO_PROXY`/`no_proxy`, and with a
//!   CA bundle `PIP_CERT`, `REQUESTS_CA_BUNDLE`, `SSL_CERT_FILE` (plus `PIP_CACHE_DIR` under
//!   `/tmp`, so pip's cache stays out of the layer);
//! - files under `/tmp/etip-net/`: the CA bundle (`ca.pem`) and, when the env layer runs Maven
//!   online, the generated `settings.xml` (mirror, proxies, credentials), the `maven-env.sh` the
//!   env script sources ([`MAVEN_ENV_HOOK`]: `-s` the settings, a truststore of the bundle on
//!   `MAVEN_OPTS`) and the truststore's source.
//!
//! None of it is in an image: the image config is the parent's (`etip_docker::build_container`),
//! `/tmp` is never archived into a layer, and the content key holds only the settings that change
//! what is downloaded, without credentials ([`Effective::key`]). Credentials are masked in
//! `--print-config` ([`mask_url`]) and in the build log ([`Effective::redact`]).
//!
//! Maven: the env layer runs Maven online (without `-o`) when it has a network and a
//! `maven_mirror_url` (or `java.args` has no `-o`); the instance layer and test runs keep
//! `java.args` (`-o` by default) and find what the env layer downloaded. With `"auto"` and no
//! mirror on the host, the host's Maven would use Maven Central: etip asks Central
//! ([`MAVEN_CENTRAL`]) once per run from the env layer's network
//! ([`Effective::central_probe_run`]: a short-lived container, the configured proxies and CA
//! bundle) and the env layer runs Maven online against it when it answers; when it does not (a
//! machine without internet), Maven stays offline with Debian's repository of the base image, so
//! offline machines build what needs no download. The answer is part of the env layer's key.

mod host;
mod maven;

pub use host::{Found, HostNetwork, detect, host};
pub use maven::MIRROR_ID;

use crate::config::BuildConfig;
use etip_core::Language;
use etip_docker::{BuildContainer, Limits, RunSpec, TmpFile};
use serde::{Deserialize, Serialize};

/// The value of a `[network]` key (the one element of a list) that means "what the host uses".
pub const AUTO: &str = "auto";

/// The build container's folder of network files (under `/tmp`: never in a layer).
pub const NET_DIR: &str = "/tmp/etip-net";
/// The CA bundle in the build container.
pub const CA_FILE: &str = "/tmp/etip-net/ca.pem";
/// pip's cache in the build container.
pub const PIP_CACHE: &str = "/tmp/etip-net/pip-cache";

/// Maven Central, the repository Maven uses when no mirror is configured (its super POM's
/// `central`).
pub const MAVEN_CENTRAL: &str = "https://repo.maven.apache.org/maven2/";

/// Sourced by the env layer's Maven section (`spec::env_script`): sets `ETIP_MAVEN_ENV_ARGS`
/// (arguments of the env layer's Maven run only) and `ETIP_MAVEN_ONLINE` (`1`: run it without
/// `-o`) from the build container's `maven-env.sh`, empty when there is none.
pub const MAVEN_ENV_HOOK: &str = "ETIP_MAVEN_ENV_ARGS=''\nETIP_MAVEN_ONLINE=''\n\
     if [ -f /tmp/etip-net/maven-env.sh ]; then . /tmp/etip-net/maven-env.sh; fi\n";

/// Whether Maven arguments make it run offline.
pub fn maven_offline(args: &[String]) -> bool {
    args.iter().any(|a| a == "-o" || a == "--offline")
}

/// The parts of a URL: `scheme://[userinfo@]hostport rest`.
pub(crate) struct Url<'a> {
    pub(crate) scheme: &'a str,
    pub(crate) userinfo: Option<&'a str>,
    pub(crate) hostport: &'a str,
    pub(crate) rest: &'a str,
}

pub(crate) fn split_url(s: &str) -> Option<Url<'_>> {
    let (scheme, after) = s.split_once("://")?;
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c));
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    (scheme_ok && !hostport.is_empty()).then_some(Url {
        scheme,
        userinfo,
        hostport,
        rest,
    })
}

/// An `http://` or `https://` URL with a host, without blanks or control characters.
pub fn is_http_url(s: &str) -> bool {
    split_url(s).is_some_and(|u| {
        matches!(u.scheme.to_ascii_lowercase().as_str(), "http" | "https")
            && u.hostport
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_:[]%".contains(c))
    }) && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// A proxy URL pip, requests and Maven all use: `http(s)://[user:password@]host[:port]`.
pub(crate) fn is_proxy_url(s: &str) -> bool {
    is_http_url(s)
}

/// `host[:port]` of `pip_trusted_hosts`.
pub(crate) fn is_trusted_host(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_:[]".contains(c))
}

/// A `no_proxy` list: host names, domains (`.corp`), addresses, ranges, `*`, comma-separated.
pub(crate) fn is_no_proxy(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || ".-_:*/[], ".contains(c))
}

/// The URL without its `user:password@`.
pub fn strip_credentials(s: &str) -> String {
    match split_url(s) {
        Some(u) if u.userinfo.is_some() => format!("{}://{}{}", u.scheme, u.hostport, u.rest),
        _ => s.to_string(),
    }
}

/// The URL with its password (or, without one, its user, a token) shown as `****`, as pip does.
pub fn mask_url(s: &str) -> String {
    match split_url(s) {
        Some(Url {
            scheme,
            userinfo: Some(info),
            hostport,
            rest,
        }) => {
            let shown = match info.split_once(':') {
                Some((user, _)) => format!("{user}:****"),
                None => "****".into(),
            };
            format!("{scheme}://{shown}@{hostport}{rest}")
        }
        _ => s.to_string(),
    }
}

/// Percent-encodes everything but unreserved characters (for a URL's userinfo).
pub(crate) fn pct_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Decodes `%XX` escapes (others kept as they are).
pub(crate) fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (b[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `[network]` section (see the module documentation): where the env layer's downloads go.
/// Every value is `"auto"` (`["auto"]` for lists: what the host uses), empty (nothing) or set.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NetworkConfig {
    pub pip_index_url: String,
    pub pip_extra_index_urls: Vec<String>,
    pub pip_trusted_hosts: Vec<String>,
    /// Mirrors every Maven repository (`<mirrorOf>*</mirrorOf>`).
    pub maven_mirror_url: String,
    pub http_proxy: String,
    pub https_proxy: String,
    pub no_proxy: String,
    /// A PEM file of CA certificates.
    pub ca_bundle: String,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        let auto = || AUTO.to_string();
        NetworkConfig {
            pip_index_url: auto(),
            pip_extra_index_urls: vec![auto()],
            pip_trusted_hosts: vec![auto()],
            maven_mirror_url: auto(),
            http_proxy: auto(),
            https_proxy: auto(),
            no_proxy: auto(),
            ca_bundle: auto(),
        }
    }
}

impl std::fmt::Debug for NetworkConfig {
    /// With credentials masked.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = self.masked();
        f.debug_struct("NetworkConfig")
            .field("pip_index_url", &m.pip_index_url)
            .field("pip_extra_index_urls", &m.pip_extra_index_urls)
            .field("pip_trusted_hosts", &m.pip_trusted_hosts)
            .field("maven_mirror_url", &m.maven_mirror_url)
            .field("http_proxy", &m.http_proxy)
            .field("https_proxy", &m.https_proxy)
            .field("no_proxy", &m.no_proxy)
            .field("ca_bundle", &m.ca_bundle)
            .finish()
    }
}

impl NetworkConfig {
    /// The section with the passwords (or tokens) of its URLs replaced by `****`.
    pub fn masked(&self) -> NetworkConfig {
        let m = |s: &String| mask_url(s);
        NetworkConfig {
            pip_index_url: m(&self.pip_index_url),
            pip_extra_index_urls: self.pip_extra_index_urls.iter().map(m).collect(),
            pip_trusted_hosts: self.pip_trusted_hosts.clone(),
            maven_mirror_url: m(&self.maven_mirror_url),
            http_proxy: m(&self.http_proxy),
            https_proxy: m(&self.https_proxy),
            no_proxy: self.no_proxy.clone(),
            ca_bundle: self.ca_bundle.clone(),
        }
    }
}

/// Adds the problems of the `[network]` section.
pub(crate) fn check_config(n: &NetworkConfig, problems: &mut Vec<String>) {
    let single = [
        ("pip_index_url", &n.pip_index_url, "an http(s) URL"),
        ("maven_mirror_url", &n.maven_mirror_url, "an http(s) URL"),
        ("http_proxy", &n.http_proxy, "an http(s) proxy URL"),
        ("https_proxy", &n.https_proxy, "an http(s) proxy URL"),
    ];
    for (key, v, what) in single {
        if v != AUTO && !v.is_empty() && !is_http_url(v) {
            problems.push(format!(
                "network.{key} {:?} is not {what} (\"auto\": the host's; \"\": none)",
                mask_url(v)
            ));
        }
    }
    if n.no_proxy != AUTO && !is_no_proxy(&n.no_proxy) {
        problems.push(format!(
            "network.no_proxy {:?} is not a comma-separated list of hosts, domains and addresses",
            n.no_proxy
        ));
    }
    let lists = [
        (
            "pip_extra_index_urls",
            &n.pip_extra_index_urls,
            is_http_url as fn(&str) -> bool,
        ),
        ("pip_trusted_hosts", &n.pip_trusted_hosts, is_trusted_host),
    ];
    for (key, list, ok) in lists {
        if list.len() == 1 && list[0] == AUTO {
            continue;
        }
        for v in list.iter().filter(|v| !ok(v)) {
            problems.push(format!(
                "network.{key}: {:?} is not {} ([\"auto\"] alone: the host's; []: none)",
                mask_url(v),
                if key == "pip_trusted_hosts" {
                    "a host[:port]"
                } else {
                    "an http(s) URL"
                }
            ));
        }
    }
    let ca = &n.ca_bundle;
    if ca != AUTO && !ca.is_empty() && !std::path::Path::new(ca).is_file() {
        problems.push(format!(
            "network.ca_bundle {ca:?} is not a file (a PEM file of CA certificates; \"auto\": the host's; \"\": none)"
        ));
    }
}

/// The `[network]` settings in effect: configured values, with `"auto"` replaced by what the host
/// uses.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Effective {
    pub pip_index_url: Option<String>,
    pub pip_extra_index_urls: Vec<String>,
    pub pip_trusted_hosts: Vec<String>,
    pub maven_mirror_url: Option<String>,
    /// `maven_mirror_url` is `"auto"` and the host has no mirror: the env layer uses Maven
    /// Central ([`MAVEN_CENTRAL`]) when it answers from the env layer's network.
    pub maven_central: bool,
    /// Whether Maven Central answered ([`Effective::central_probe`]); `None`: not asked.
    pub central: Option<bool>,
    pub http_proxy: Option<String>,
    pub https_proxy: Option<String>,
    pub no_proxy: Option<String>,
    /// Path of the CA bundle (a PEM file on the host).
    pub ca_bundle: Option<String>,
    /// Whether `ca_bundle` was configured (its absence is then an error) rather than found.
    pub ca_configured: bool,
    /// One masked line per setting in effect, saying where it came from (for the build log).
    pub report: Vec<String>,
}

impl std::fmt::Debug for Effective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(&self.report).finish()
    }
}

fn one(
    key: &str,
    configured: &str,
    found: &Option<Found<String>>,
    report: &mut Vec<String>,
) -> Option<String> {
    let (value, from) = match (configured, found) {
        (AUTO, Some(f)) => (f.value.clone(), format!("auto: {}", f.source)),
        (AUTO, None) | ("", _) => return None,
        (v, _) => (v.to_string(), "configured".into()),
    };
    report.push(format!("{key} = {} ({from})", mask_url(&value)));
    Some(value)
}

fn list(
    key: &str,
    configured: &[String],
    found: &Option<Found<Vec<String>>>,
    report: &mut Vec<String>,
) -> Vec<String> {
    let (value, from) = match (configured, found) {
        ([a], Some(f)) if a == AUTO => (f.value.clone(), format!("auto: {}", f.source)),
        ([a], None) if a == AUTO => return Vec::new(),
        (v, _) => (v.to_vec(), "configured".into()),
    };
    if !value.is_empty() {
        let shown: Vec<String> = value.iter().map(|v| mask_url(v)).collect();
        report.push(format!("{key} = {} ({from})", shown.join(" ")));
    }
    value
}

impl Effective {
    /// The settings of `n`, with `"auto"` taken from `host`.
    pub fn resolve(n: &NetworkConfig, host: &HostNetwork) -> Effective {
        let mut r = Vec::new();
        let h = host;
        let mut e = Effective {
            pip_index_url: one("pip_index_url", &n.pip_index_url, &h.pip_index_url, &mut r),
            pip_extra_index_urls: list(
                "pip_extra_index_urls",
                &n.pip_extra_index_urls,
                &h.pip_extra_index_urls,
                &mut r,
            ),
            pip_trusted_hosts: list(
                "pip_trusted_hosts",
                &n.pip_trusted_hosts,
                &h.pip_trusted_hosts,
                &mut r,
            ),
            maven_mirror_url: one(
                "maven_mirror_url",
                &n.maven_mirror_url,
                &h.maven_mirror_url,
                &mut r,
            ),
            maven_central: n.maven_mirror_url == AUTO && h.maven_mirror_url.is_none(),
            central: None,
            http_proxy: one("http_proxy", &n.http_proxy, &h.http_proxy, &mut r),
            https_proxy: one("https_proxy", &n.https_proxy, &h.https_proxy, &mut r),
            no_proxy: one("no_proxy", &n.no_proxy, &h.no_proxy, &mut r),
            ca_bundle: one("ca_bundle", &n.ca_bundle, &h.ca_bundle, &mut r),
            ca_configured: n.ca_bundle != AUTO && !n.ca_bundle.is_empty(),
            report: Vec::new(),
        };
        if e.maven_central {
            let at = r
                .iter()
                .position(|l| l.starts_with("http_proxy") || l.starts_with("https_proxy"))
                .unwrap_or(r.len());
            r.insert(
                at,
                format!(
                    "maven_mirror_url = none on this host (auto): Maven uses Maven Central \
                     ({MAVEN_CENTRAL}) when it answers from the env layer's network, else it \
                     stays offline"
                ),
            );
        }
        r.extend(h.notes.iter().map(|n| format!("note: {n}")));
        e.report = r;
        e
    }

    /// The URLs that may carry credentials.
    fn urls(&self) -> impl Iterator<Item = &String> {
        self.pip_index_url
            .iter()
            .chain(&self.pip_extra_index_urls)
            .chain(&self.maven_mirror_url)
            .chain(&self.http_proxy)
            .chain(&self.https_proxy)
    }

    /// The credentials of the settings (passwords, or users standing alone as tokens), as written
    /// and decoded.
    pub fn secrets(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for u in self.urls() {
            let Some(info) = split_url(u).and_then(|p| p.userinfo) else {
                continue;
            };
            let secret = info.split_once(':').map_or(info, |(_, pw)| pw);
            for s in [secret.to_string(), pct_decode(secret)] {
                if s.len() >= 3 && !out.contains(&s) {
                    out.push(s);
                }
            }
        }
        out.sort_by_key(|s| std::cmp::Reverse(s.len()));
        out
    }

    /// `text` with every credential replaced by `****`.
    pub fn redact(&self, text: &str) -> String {
        self.secrets()
            .iter()
            .fold(text.to_string(), |t, s| t.replace(s.as_str(), "****"))
    }

    /// What the settings add to the env layer's content key: only what changes the downloads
    /// (indexes and mirror without credentials), never proxies, CA bundles or credentials.
    pub fn key(&self, cfg: &BuildConfig, lang: Language) -> String {
        if !cfg.env_network.enabled() {
            return "network none".into();
        }
        let strip = |v: &Option<String>| v.as_deref().map(strip_credentials).unwrap_or_default();
        match lang {
            Language::Python => {
                let extra: Vec<String> = self
                    .pip_extra_index_urls
                    .iter()
                    .map(|u| strip_credentials(u))
                    .collect();
                format!(
                    "network on\npip_index_url {}\npip_extra_index_urls {}\npip_trusted_hosts {}",
                    strip(&self.pip_index_url),
                    extra.join(" "),
                    self.pip_trusted_hosts.join(" ")
                )
            }
            Language::Java => format!(
                "network on\nmaven_mirror_url {}\nmaven online {}",
                match (&self.maven_mirror_url, self.central) {
                    (None, Some(answers)) => format!("central {MAVEN_CENTRAL} answers {answers}"),
                    (m, _) => strip(m),
                },
                self.maven_online(cfg)
            ),
        }
    }

    /// Whether the env layer runs Maven online: a mirror is configured, Maven Central answered
    /// ([`Effective::central`]), or `java.args` lack `-o`.
    pub fn maven_online(&self, cfg: &BuildConfig) -> bool {
        cfg.env_network.enabled()
            && (self.maven_mirror_url.is_some()
                || self.central_answers()
                || !maven_offline(&cfg.java.args))
    }

    /// Maven Central answered and stands in for the missing mirror.
    pub fn central_answers(&self) -> bool {
        self.maven_mirror_url.is_none() && self.central == Some(true)
    }

    /// Whether Maven Central must be asked before the env layer of a Java project: the env layer
    /// has a network, `maven_mirror_url` is `"auto"` with no mirror on the host, and `java.args`
    /// keep Maven offline (without `-o` it goes online anyway).
    pub fn central_probe(&self, cfg: &BuildConfig) -> bool {
        cfg.env_network.enabled() && self.maven_central && maven_offline(&cfg.java.args)
    }

    /// The container that asks Maven Central whether it answers (see [`Effective::central_probe`]):
    /// `python3` of `image` on the env layer's network, with its variables (proxies) and the CA
    /// bundle as a file; at most 30 s, small limits.
    pub fn central_probe_run(&self, cfg: &BuildConfig, image: &str, ca: Option<&[u8]>) -> RunSpec {
        let mut spec = RunSpec::new(image, ["python3", "-c", maven::PROBE_PY, MAVEN_CENTRAL])
            .limits(Limits {
                cpus: 1.0,
                memory_bytes: 256 << 20,
                timeout: std::time::Duration::from_secs(30),
                pids: 64,
            });
        spec.network_enabled = true;
        spec.network = cfg.env_network.named().map(str::to_string);
        spec.env = self.env(false);
        if let Some(pem) = ca {
            spec.env.push(format!("ETIP_CA_FILE={CA_FILE}"));
            spec.files.push(TmpFile {
                path: CA_FILE.into(),
                data: pem.to_vec(),
                mode: 0o644,
            });
        }
        spec
    }

    /// `pip_trusted_hosts` and the `host:port` of every `http://` index: pip ignores a plain-HTTP
    /// index unless its host is trusted, and an `http://` URL in the settings is a choice made.
    pub fn trusted_hosts(&self) -> Vec<String> {
        let mut hosts = self.pip_trusted_hosts.clone();
        for u in self.pip_index_url.iter().chain(&self.pip_extra_index_urls) {
            if let Some(p) = split_url(u).filter(|p| p.scheme.eq_ignore_ascii_case("http"))
                && !hosts.iter().any(|h| h == p.hostport)
            {
                hosts.push(p.hostport.to_string());
            }
        }
        hosts
    }

    /// The variables of the env layer's build container (`ca`: the CA bundle is uploaded).
    pub fn env(&self, ca: bool) -> Vec<String> {
        let mut env = vec![format!("PIP_CACHE_DIR={PIP_CACHE}")];
        let mut set = |names: &[&str], v: &str| {
            for n in names {
                env.push(format!("{n}={v}"));
            }
        };
        if let Some(v) = &self.pip_index_url {
            set(&["PIP_INDEX_URL"], v);
        }
        if !self.pip_extra_index_urls.is_empty() {
            set(
                &["PIP_EXTRA_INDEX_URL"],
                &self.pip_extra_index_urls.join(" "),
            );
        }
        let trusted = self.trusted_hosts();
        if !trusted.is_empty() {
            set(&["PIP_TRUSTED_HOST"], &trusted.join(" "));
        }
        for (names, v) in [
            (["HTTP_PROXY", "http_proxy"], &self.http_proxy),
            (["HTTPS_PROXY", "https_proxy"], &self.https_proxy),
            (["NO_PROXY", "no_proxy"], &self.no_proxy),
        ] {
            if let Some(v) = v {
                set(&names, v);
            }
        }
        if ca {
            set(
                &["PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"],
                CA_FILE,
            );
        }
        env
    }
}

/// The env layer's build container (see the module documentation): its network, variables and
/// files. `ca`: the CA bundle's PEM text. Without a network, nothing.
pub fn env_container(
    cfg: &BuildConfig,
    eff: &Effective,
    lang: Language,
    ca: Option<Vec<u8>>,
) -> BuildContainer {
    if !cfg.env_network.enabled() {
        return BuildContainer::default();
    }
    let file = |path: &str, data: Vec<u8>| TmpFile {
        path: path.into(),
        data,
        mode: 0o644,
    };
    let has_ca = ca.is_some();
    let mut files: Vec<TmpFile> = ca.into_iter().map(|pem| file(CA_FILE, pem)).collect();
    if lang == Language::Java && eff.maven_online(cfg) {
        let settings = maven::settings_xml(
            eff.maven_mirror_url.as_deref(),
            eff.http_proxy.as_deref(),
            eff.https_proxy.as_deref(),
            eff.no_proxy.as_deref(),
        );
        let online = match eff.maven_mirror_url.as_deref() {
            Some(url) => maven::Online::Mirror(url),
            None if eff.central_answers() => maven::Online::Central,
            None => maven::Online::ByArgs,
        };
        let script = maven::env_script(online, !cfg.java.settings.is_empty(), has_ca);
        files.push(file(maven::SETTINGS, settings.into_bytes()));
        files.push(file(maven::ENV_SCRIPT, script.into_bytes()));
        if has_ca {
            files.push(file(maven::TRUST_SOURCE, maven::TRUST_JAVA.into()));
        }
    }
    BuildContainer {
        network: cfg.env_network.named().map(str::to_string),
        env: eff.env(has_ca),
        files,
    }
}

/// What `--print-config` says above each key.
const DOCS: &[(&str, &str)] = &[
    (
        "env_network",
        "network of the env layer build: \"bridge\", \"none\" or a user-defined Docker network (e.g. a mirror's); the instance layer and test runs never have one",
    ),
    (
        "pip_index_url",
        "pip's index in the env layer (PIP_INDEX_URL); \"auto\": $PIP_INDEX_URL or pip.conf index-url; \"\": PyPI",
    ),
    (
        "pip_extra_index_urls",
        "more indexes (PIP_EXTRA_INDEX_URL); [\"auto\"]: $PIP_EXTRA_INDEX_URL or pip.conf extra-index-url; []: none",
    ),
    (
        "pip_trusted_hosts",
        "hosts pip trusts without valid HTTPS (PIP_TRUSTED_HOST); [\"auto\"]: $PIP_TRUSTED_HOST or pip.conf trusted-host",
    ),
    (
        "maven_mirror_url",
        "mirror of every Maven repository (<mirrorOf>*</mirrorOf>, id central); with it the env layer runs Maven online, the instance layer and test runs keep -o; \"auto\": ~/.m2/settings.xml's mirror of * or central, else Maven Central when it answers from the env layer's network; \"\": Maven stays offline",
    ),
    (
        "http_proxy",
        "proxy of http downloads (HTTP_PROXY, Maven <proxy>); \"auto\": $http_proxy, $HTTP_PROXY or ~/.m2/settings.xml",
    ),
    (
        "https_proxy",
        "proxy of https downloads (HTTPS_PROXY, Maven <proxy>); \"auto\": $https_proxy, $HTTPS_PROXY or ~/.m2/settings.xml",
    ),
    (
        "no_proxy",
        "hosts reached without proxy, comma-separated (NO_PROXY, Maven nonProxyHosts); \"auto\": $no_proxy or $NO_PROXY",
    ),
    (
        "ca_bundle",
        "PEM file of the CAs trusted for HTTPS (PIP_CERT, REQUESTS_CA_BUNDLE, SSL_CERT_FILE, a Java truststore for Maven), copied under /tmp of the env build only; \"auto\": $PIP_CERT, pip.conf cert, $REQUESTS_CA_BUNDLE or $SSL_CERT_FILE",
    ),
];

/// What `"auto"` finds for `key` on `host`: the masked value and its source.
fn found(host: &HostNetwork, key: &str) -> Option<(String, String)> {
    let s = |f: &Option<Found<String>>| f.as_ref().map(|f| (mask_url(&f.value), f.source.clone()));
    let l = |f: &Option<Found<Vec<String>>>| {
        f.as_ref().map(|f| {
            let v: Vec<String> = f.value.iter().map(|v| mask_url(v)).collect();
            (v.join(" "), f.source.clone())
        })
    };
    match key {
        "pip_index_url" => s(&host.pip_index_url),
        "pip_extra_index_urls" => l(&host.pip_extra_index_urls),
        "pip_trusted_hosts" => l(&host.pip_trusted_hosts),
        "maven_mirror_url" => s(&host.maven_mirror_url),
        "http_proxy" => s(&host.http_proxy),
        "https_proxy" => s(&host.https_proxy),
        "no_proxy" => s(&host.no_proxy),
        "ca_bundle" => s(&host.ca_bundle),
        _ => None,
    }
}

/// The TOML of `--print-config` with comments explaining `env_network` and every `[network]`
/// key, and, with `host`, what `"auto"` finds there.
pub(crate) fn annotate_toml(text: &str, host: Option<&HostNetwork>) -> String {
    let mut out = String::new();
    let mut section = String::new();
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            if section == "network" {
                out.push_str(
                    "# Where the env layer's downloads go, applied inside its build container only (never\n\
                     # in an image; credentials stay out of keys and logs). \"auto\": what this machine uses.\n",
                );
                out.push_str(line);
                out.push('\n');
                for n in host.map(|h| h.notes.as_slice()).unwrap_or_default() {
                    out.push_str(&format!("# note: {n}\n"));
                }
                continue;
            }
        }
        let key = line.split_once(" = ").map(|(k, _)| k.trim());
        let doc = key.and_then(|k| DOCS.iter().find(|(d, _)| *d == k));
        let applies = |k: &str| (section.is_empty() && k == "env_network") || section == "network";
        if let Some((k, d)) = doc.filter(|(k, _)| applies(k)) {
            out.push_str(&format!("# {d}\n"));
            if section == "network"
                && let Some(h) = host
            {
                match found(h, k) {
                    Some((v, from)) => out.push_str(&format!("# auto here: {v} (from {from})\n")),
                    None if *k == "maven_mirror_url" => out.push_str(&format!(
                        "# auto here: no mirror; Maven Central ({MAVEN_CENTRAL}) if it answers\n"
                    )),
                    None => out.push_str("# auto here: nothing set\n"),
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests;
