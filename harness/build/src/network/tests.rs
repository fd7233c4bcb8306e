use super::*;
use crate::config::EnvNetwork;

const IDX: &str = "https://idxuser:Idx%40S3cret@index.example/simple/";
const PROXY: &str = "http://proxyuser:Pr0xyS3cret@proxy.example:3128";

fn cfg_with(n: NetworkConfig) -> BuildConfig {
    BuildConfig {
        network: n,
        ..BuildConfig::default()
    }
}

fn secret_network() -> NetworkConfig {
    NetworkConfig {
        pip_index_url: IDX.into(),
        pip_extra_index_urls: vec!["https://tok3n@extra.example/simple/".into()],
        pip_trusted_hosts: vec!["index.example".into()],
        maven_mirror_url: "https://mu:MirS3cret@nexus.example/maven2/".into(),
        http_proxy: PROXY.into(),
        https_proxy: PROXY.into(),
        no_proxy: "localhost,.corp".into(),
        ca_bundle: String::new(),
    }
}

#[test]
fn urls_are_split_masked_and_stripped() {
    assert_eq!(mask_url(IDX), "https://idxuser:****@index.example/simple/");
    assert_eq!(mask_url("https://tok@h/x"), "https://****@h/x");
    assert_eq!(mask_url("auto"), "auto");
    assert_eq!(strip_credentials(PROXY), "http://proxy.example:3128");
    assert_eq!(strip_credentials("https://h/x?a@b"), "https://h/x?a@b");
    assert!(is_http_url("http://etiptest-srv-1:8000/simple/") && is_http_url(IDX));
    for bad in [
        "ftp://h/",
        "https://",
        "/local/dir",
        "https://h x/",
        "socks5://h:1",
        "h:80",
    ] {
        assert!(!is_http_url(bad), "{bad}");
    }
    assert_eq!(pct_decode("a%40b%zz%2"), "a@b%zz%2");
    assert_eq!(pct_encode("p@ss:w/rd"), "p%40ss%3Aw%2Frd");
    assert_eq!(pct_decode(&pct_encode("ü &x")), "ü &x");
}

#[test]
fn configuration_values_are_checked() {
    let mut problems = Vec::new();
    check_config(&NetworkConfig::default(), &mut problems);
    check_config(&secret_network(), &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
    let bad = NetworkConfig {
        pip_index_url: "https://u:hunter2@h/simple x".into(),
        pip_extra_index_urls: vec!["auto".into(), "https://h/".into()],
        pip_trusted_hosts: vec!["a host".into()],
        maven_mirror_url: "file:///m2".into(),
        http_proxy: "socks5://p:1080".into(),
        https_proxy: "proxy:3128".into(),
        no_proxy: "a;b".into(),
        ca_bundle: "/no/such/ca.pem".into(),
    };
    check_config(&bad, &mut problems);
    let all = problems.join("\n");
    for key in [
        "pip_index_url",
        "pip_extra_index_urls",
        "pip_trusted_hosts",
        "maven_mirror_url",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "ca_bundle",
    ] {
        assert!(all.contains(&format!("network.{key}")), "{key}: {all}");
    }
    assert!(!all.contains("hunter2"), "{all}");
}

#[test]
fn auto_takes_the_hosts_values_and_explicit_values_win() {
    let host = HostNetwork {
        pip_index_url: Some(Found {
            value: "https://u:pw1234@host-index.example/simple/".into(),
            source: "$PIP_INDEX_URL".into(),
        }),
        ca_bundle: Some(Found {
            value: "/etc/ssl/certs/ca-certificates.crt".into(),
            source: "$PIP_CERT".into(),
        }),
        notes: vec!["a note".into()],
        ..HostNetwork::default()
    };
    let e = Effective::resolve(&NetworkConfig::default(), &host);
    assert_eq!(
        e.pip_index_url.as_deref(),
        Some("https://u:pw1234@host-index.example/simple/")
    );
    assert_eq!(
        e.ca_bundle.as_deref(),
        Some("/etc/ssl/certs/ca-certificates.crt")
    );
    assert!(!e.ca_configured && e.http_proxy.is_none() && e.pip_extra_index_urls.is_empty());
    let report = e.report.join("\n");
    assert!(report.contains(
        "pip_index_url = https://u:****@host-index.example/simple/ (auto: $PIP_INDEX_URL)"
    ));
    assert!(
        report.contains("note: a note") && !report.contains("pw1234"),
        "{report}"
    );
    let explicit = NetworkConfig {
        pip_index_url: "http://srv:8000/simple/".into(),
        ca_bundle: String::new(),
        pip_trusted_hosts: Vec::new(),
        ..NetworkConfig::default()
    };
    let e = Effective::resolve(&explicit, &host);
    assert_eq!(e.pip_index_url.as_deref(), Some("http://srv:8000/simple/"));
    assert!(e.ca_bundle.is_none() && e.pip_trusted_hosts.is_empty());
    // pip ignores a plain-HTTP index unless its host is trusted.
    assert_eq!(e.trusted_hosts(), ["srv:8000"]);
    assert!(
        e.env(false)
            .contains(&"PIP_TRUSTED_HOST=srv:8000".to_string())
    );
}

#[test]
fn secrets_are_found_and_redacted() {
    let e = Effective::resolve(&secret_network(), &HostNetwork::default());
    let s = e.secrets();
    for secret in [
        "Idx%40S3cret",
        "Idx@S3cret",
        "Pr0xyS3cret",
        "MirS3cret",
        "tok3n",
    ] {
        assert!(s.contains(&secret.to_string()), "{secret} in {s:?}");
    }
    let log = format!("Looking in {IDX}\nproxy {PROXY}\ndecoded Idx@S3cret\n");
    let clean = e.redact(&log);
    for secret in &s {
        assert!(!clean.contains(secret.as_str()), "{secret}: {clean}");
    }
    assert!(
        clean.contains("https://idxuser:****@index.example/simple/"),
        "{clean}"
    );
    assert!(format!("{e:?}").contains("****") && !format!("{e:?}").contains("MirS3cret"));
    assert!(!format!("{:?}", secret_network()).contains("Pr0xyS3cret"));
}

#[test]
fn the_key_holds_what_changes_downloads_and_no_credentials() {
    let cfg = cfg_with(secret_network());
    let e = Effective::resolve(&cfg.network, &HostNetwork::default());
    for lang in [Language::Python, Language::Java] {
        let k = e.key(&cfg, lang);
        for secret in e.secrets() {
            assert!(!k.contains(&secret), "{secret} in {k}");
        }
        assert!(!k.contains("proxy"), "{k}");
    }
    assert!(
        e.key(&cfg, Language::Python)
            .contains("https://index.example/simple/")
    );
    assert!(
        e.key(&cfg, Language::Java)
            .contains("https://nexus.example/maven2/")
    );
    // Another password or proxy, the same key; another index, another key.
    let mut other = secret_network();
    other.pip_index_url = "https://idxuser:other@index.example/simple/".into();
    other.http_proxy = String::new();
    let e2 = Effective::resolve(&other, &HostNetwork::default());
    assert_eq!(
        e.key(&cfg, Language::Python),
        e2.key(&cfg_with(other.clone()), Language::Python)
    );
    other.pip_index_url = "https://index2.example/simple/".into();
    let e3 = Effective::resolve(&other, &HostNetwork::default());
    assert_ne!(
        e.key(&cfg, Language::Python),
        e3.key(&cfg_with(other), Language::Python)
    );
    let offline = BuildConfig {
        env_network: EnvNetwork::None,
        ..cfg.clone()
    };
    assert_eq!(e.key(&offline, Language::Python), "network none");
}

#[test]
fn the_env_container_gets_variables_files_and_network() {
    let mut cfg = cfg_with(secret_network());
    cfg.env_network = EnvNetwork::Named("etip-mirror".into());
    let e = Effective::resolve(&cfg.network, &HostNetwork::default());
    let pem = b"-----BEGIN CERTIFICATE-----\n".to_vec();
    let py = env_container(&cfg, &e, Language::Python, Some(pem.clone()));
    assert_eq!(py.network.as_deref(), Some("etip-mirror"));
    for v in [
        format!("PIP_INDEX_URL={IDX}"),
        "PIP_EXTRA_INDEX_URL=https://tok3n@extra.example/simple/".into(),
        "PIP_TRUSTED_HOST=index.example".into(),
        format!("HTTPS_PROXY={PROXY}"),
        format!("http_proxy={PROXY}"),
        "NO_PROXY=localhost,.corp".into(),
        format!("PIP_CERT={CA_FILE}"),
        format!("SSL_CERT_FILE={CA_FILE}"),
        format!("PIP_CACHE_DIR={PIP_CACHE}"),
    ] {
        assert!(py.env.contains(&v), "{v} in {py:?}");
    }
    let paths = |bc: &BuildContainer| bc.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
    assert_eq!(paths(&py), [CA_FILE]);
    py.check(&[]).unwrap();
    let java = env_container(&cfg, &e, Language::Java, Some(pem));
    assert_eq!(
        paths(&java),
        [
            CA_FILE,
            maven::SETTINGS,
            maven::ENV_SCRIPT,
            maven::TRUST_SOURCE
        ]
    );
    let settings = String::from_utf8(java.files[1].data.clone()).unwrap();
    assert!(
        settings.contains("<password>MirS3cret</password>") && settings.contains("Pr0xyS3cret")
    );
    // Without a mirror (and -o in java.args) Maven stays offline: no Maven files.
    cfg.network.maven_mirror_url = String::new();
    let e = Effective::resolve(&cfg.network, &HostNetwork::default());
    assert!(!e.maven_online(&cfg));
    assert!(
        env_container(&cfg, &e, Language::Java, None)
            .files
            .is_empty()
    );
    // "auto" with no mirror on the host: Maven Central is asked (with -o in java.args) and
    // stands in for the mirror when it answered; the answer is in the key.
    cfg.network.maven_mirror_url = AUTO.into();
    let mut e = Effective::resolve(&cfg.network, &HostNetwork::default());
    assert!(e.maven_central && e.central_probe(&cfg) && !e.maven_online(&cfg));
    assert!(
        e.report
            .iter()
            .any(|l| l.starts_with("maven_mirror_url = none on this host (auto)")),
        "{:?}",
        e.report
    );
    let probe = e.central_probe_run(&cfg, "img", Some(b"PEM"));
    assert_eq!(probe.cmd.last().map(String::as_str), Some(MAVEN_CENTRAL));
    assert!(probe.network_enabled && probe.network.as_deref() == Some("etip-mirror"));
    assert!(probe.env.contains(&format!("ETIP_CA_FILE={CA_FILE}")));
    assert_eq!(probe.files.len(), 1);
    assert_eq!(
        (probe.files[0].path.as_str(), &probe.files[0].data[..]),
        (CA_FILE, &b"PEM"[..])
    );
    assert!(probe.env.contains(&format!("HTTPS_PROXY={PROXY}")));
    e.central = Some(false);
    let silent = e.key(&cfg, Language::Java);
    assert!(!e.maven_online(&cfg));
    e.central = Some(true);
    assert!(e.maven_online(&cfg));
    assert_ne!(e.key(&cfg, Language::Java), silent);
    let java = env_container(&cfg, &e, Language::Java, None);
    assert_eq!(paths(&java), [maven::SETTINGS, maven::ENV_SCRIPT]);
    let settings = String::from_utf8(java.files[0].data.clone()).unwrap();
    assert!(
        !settings.contains("<mirrors>") && settings.contains("<proxies>"),
        "{settings}"
    );
    let script = String::from_utf8(java.files[1].data.clone()).unwrap();
    assert!(
        script.contains("ETIP_MAVEN_ONLINE=1") && script.contains(MAVEN_CENTRAL),
        "{script}"
    );
    // A mirror found on the host is used as it is, without asking Central; without -o Maven
    // goes online anyway, so Central is not asked either.
    let host = HostNetwork {
        maven_mirror_url: Some(Found {
            value: "https://m.example/".into(),
            source: "~/.m2/settings.xml mirror m".into(),
        }),
        ..HostNetwork::default()
    };
    assert!(!Effective::resolve(&cfg.network, &host).central_probe(&cfg));
    let mut online = cfg.clone();
    online.java.args.retain(|a| a != "-o");
    assert!(!Effective::resolve(&cfg.network, &HostNetwork::default()).central_probe(&online));
    // Without a network, nothing at all.
    cfg.env_network = EnvNetwork::None;
    assert_eq!(
        env_container(&cfg, &e, Language::Python, None),
        BuildContainer::default()
    );
}

#[test]
fn print_config_explains_the_keys_and_masks_credentials() {
    let cfg = cfg_with(secret_network());
    let host = HostNetwork {
        ca_bundle: Some(Found {
            value: "/etc/ssl/certs/ca-certificates.crt".into(),
            source: "$PIP_CERT".into(),
        }),
        notes: vec!["x is not usable".into()],
        ..HostNetwork::default()
    };
    let text = cfg.to_toml_with(Some(&host));
    for secret in ["Idx%40S3cret", "Pr0xyS3cret", "MirS3cret", "tok3n"] {
        assert!(!text.contains(secret), "{secret}: {text}");
    }
    assert!(text.contains("pip_index_url = \"https://idxuser:****@index.example/simple/\""));
    for (key, _) in DOCS {
        assert!(text.contains(&format!("\n{key} = ")), "{key}: {text}");
    }
    assert_eq!(text.matches("\n# auto here:").count(), 8, "{text}");
    assert!(text.contains("# auto here: /etc/ssl/certs/ca-certificates.crt (from $PIP_CERT)"));
    assert!(text.contains("# note: x is not usable"));
    assert!(text.contains("# network of the env layer build"));
    // Without the host, the explanations only; the defaults read back as they were.
    let plain = BuildConfig::default().to_toml();
    assert!(!plain.contains("auto here") && plain.contains("# mirror of every Maven repository"));
    let back: BuildConfig = toml::from_str(&plain).unwrap();
    assert_eq!(back, BuildConfig::default());
}
