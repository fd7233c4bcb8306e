//! Maven's side of the network settings: reading the host's `~/.m2/settings.xml` (mirror,
//! servers, proxies) and writing the env layer's own settings, the script that puts them on
//! Maven's command line and the truststore made of the CA bundle, all under `/tmp` of the env
//! layer's build container.

use super::host::Found;
use super::{NET_DIR, pct_decode, pct_encode, split_url};

/// Where the generated files go in the build container.
pub const SETTINGS: &str = "/tmp/etip-net/settings.xml";
pub const ENV_SCRIPT: &str = "/tmp/etip-net/maven-env.sh";
pub const TRUST_SOURCE: &str = "/tmp/etip-net/EtipTrust.java";

/// The id of the generated mirror. Maven records where each downloaded file came from
/// (`_remote.repositories`) and, offline, uses a file only for a repository of that id: the
/// instance layer and test runs (offline, without these settings) ask for `central`, so the
/// mirror must be called that.
pub const MIRROR_ID: &str = "central";

/// What `~/.m2/settings.xml` says about the network.
#[derive(Debug, Default)]
pub(crate) struct M2 {
    pub(crate) mirror: Option<Found<String>>,
    pub(crate) http_proxy: Option<Found<String>>,
    pub(crate) https_proxy: Option<Found<String>>,
    pub(crate) no_proxy: Option<Found<String>>,
    pub(crate) notes: Vec<String>,
}

/// One `<mirror>`, `<server>` or `<proxy>` element: its children's texts.
type Record = Vec<(String, String)>;

fn get<'a>(r: &'a Record, k: &str) -> Option<&'a str> {
    r.iter()
        .find(|(n, _)| n == k)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// The `<mirror>`, `<server>` and `<proxy>` records of a settings file (`None` when it is not
/// well-formed XML).
fn records(text: &str) -> Option<Vec<(String, Record)>> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut path: Vec<String> = Vec::new();
    let mut out: Vec<(String, Record)> = Vec::new();
    let mut text_buf = String::new();
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if path.len() == 2 && matches!(name.as_str(), "mirror" | "server" | "proxy") {
                    out.push((name.clone(), Record::new()));
                }
                path.push(name);
                text_buf.clear();
            }
            Event::Text(t) => text_buf.push_str(&t.decode().ok()?),
            Event::CData(t) => text_buf.push_str(&String::from_utf8_lossy(&t)),
            Event::GeneralRef(r) => match r.resolve_char_ref().ok()? {
                Some(c) => text_buf.push(c),
                None => {
                    let name = r.decode().ok()?;
                    text_buf.push_str(quick_xml::escape::resolve_predefined_entity(&name)?);
                }
            },
            Event::End(_) => {
                if path.len() == 4
                    && let Some((_, rec)) = out.last_mut()
                {
                    rec.push((path[3].clone(), text_buf.clone()));
                }
                path.pop();
                text_buf.clear();
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Some(out)
}

/// A plain (not `{encrypted}`) value, else a note.
fn plain(v: Option<&str>, what: &str, notes: &mut Vec<String>) -> Option<String> {
    let v = v?;
    if v.starts_with('{') && v.ends_with('}') {
        notes.push(format!(
            "{what}: the password is encrypted (settings-security.xml), so it is not used"
        ));
        return None;
    }
    Some(v.to_string())
}

/// `user:password@` (percent-encoded) of a username and password, or nothing without both.
fn userinfo(user: Option<String>, pass: Option<String>) -> String {
    match (user, pass) {
        (Some(u), Some(p)) => format!("{}:{}@", pct_encode(&u), pct_encode(&p)),
        _ => String::new(),
    }
}

/// Reads the mirror, proxies and their credentials of a Maven settings file at `path`.
pub(crate) fn read_settings(text: &str, path: &str) -> M2 {
    let mut m2 = M2::default();
    let Some(recs) = records(text) else {
        m2.notes
            .push(format!("{path} is not well-formed XML and is not used"));
        return m2;
    };
    let of = |kind: &'static str| recs.iter().filter(move |(k, _)| k == kind).map(|(_, r)| r);
    let mirror = of("mirror").find(|r| {
        get(r, "mirrorOf").is_some_and(|m| {
            m.split(',')
                .any(|p| matches!(p.trim(), "*" | "external:*" | "central"))
        })
    });
    if let Some(r) = mirror
        && let Some(url) = get(r, "url")
    {
        let id = get(r, "id").unwrap_or("");
        let server = of("server").find(|s| get(s, "id") == Some(id));
        let what = format!("{path} server {id}");
        let creds = server.map(|s| {
            let user = get(s, "username").map(str::to_string);
            let pass = plain(get(s, "password"), &what, &mut m2.notes);
            userinfo(user, pass)
        });
        let url = match (creds, url.split_once("://")) {
            (Some(c), Some((scheme, rest))) if !c.is_empty() => format!("{scheme}://{c}{rest}"),
            _ => url.to_string(),
        };
        m2.mirror = Some(Found {
            value: url,
            source: format!("{path} mirror {id}"),
        });
    }
    for r in of("proxy") {
        if get(r, "active").is_some_and(|a| a.eq_ignore_ascii_case("false")) {
            continue;
        }
        let Some(host) = get(r, "host") else { continue };
        let protocol = get(r, "protocol").unwrap_or("http").to_ascii_lowercase();
        let slot = match protocol.as_str() {
            "http" if m2.http_proxy.is_none() => &mut m2.http_proxy,
            "https" if m2.https_proxy.is_none() => &mut m2.https_proxy,
            _ => continue,
        };
        let id = get(r, "id").unwrap_or("");
        let what = format!("{path} proxy {id}");
        let user = get(r, "username").map(str::to_string);
        let pass = plain(get(r, "password"), &what, &mut m2.notes);
        let port = get(r, "port").unwrap_or("8080");
        *slot = Some(Found {
            value: format!("http://{}{host}:{port}", userinfo(user, pass)),
            source: format!("{path} proxy {id}"),
        });
        if m2.no_proxy.is_none()
            && let Some(hosts) = get(r, "nonProxyHosts")
        {
            let list: Vec<String> = hosts
                .split(['|', ','])
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .map(|h| h.strip_prefix('*').unwrap_or(h).to_string())
                .collect();
            m2.no_proxy = Some(Found {
                value: list.join(","),
                source: format!("{path} proxy {id} nonProxyHosts"),
            });
        }
    }
    m2
}

fn xml(s: &str) -> String {
    quick_xml::escape::escape(s).into_owned()
}

/// `<nonProxyHosts>` of a `no_proxy` list: `.corp` and `corp` (which curl and pip also apply to
/// subdomains) become `*.corp`; address ranges (`10.0.0.0/8`), which Maven cannot express, are
/// left out.
fn non_proxy_hosts(no_proxy: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    for h in no_proxy.split(',').map(str::trim).filter(|h| !h.is_empty()) {
        if h.contains('/') {
            continue;
        }
        if h == "*" {
            return "*".into();
        }
        match h.strip_prefix('.') {
            Some(d) => out.push(format!("*.{d}")),
            None => {
                out.push(h.to_string());
                if !h.starts_with('*') && h.parse::<std::net::IpAddr>().is_err() {
                    out.push(format!("*.{h}"));
                }
            }
        }
    }
    out.join("|")
}

/// A `<proxy>` element for `protocol` (the URLs it serves) from a proxy URL.
fn proxy_element(protocol: &str, url: &str, no_proxy: Option<&str>) -> String {
    let Some(p) = split_url(url) else {
        return String::new();
    };
    let default_port = if p.scheme == "https" { "443" } else { "80" };
    let split = match p.hostport.strip_prefix('[') {
        Some(v6) => v6
            .split_once("]:")
            .map(|(h, port)| (format!("[{h}]"), port)),
        None => p
            .hostport
            .rsplit_once(':')
            .map(|(h, port)| (h.to_string(), port)),
    };
    let (host, port) = split.unwrap_or((p.hostport.to_string(), default_port));
    let mut e = format!(
        "    <proxy>\n      <id>etip-{protocol}</id>\n      <active>true</active>\n      \
         <protocol>{protocol}</protocol>\n      <host>{}</host>\n      <port>{}</port>\n",
        xml(&host),
        xml(port)
    );
    if let Some(info) = p.userinfo {
        let (u, pw) = info.split_once(':').unwrap_or((info, ""));
        e.push_str(&format!(
            "      <username>{}</username>\n      <password>{}</password>\n",
            xml(&pct_decode(u)),
            xml(&pct_decode(pw))
        ));
    }
    if let Some(np) = no_proxy.map(non_proxy_hosts).filter(|n| !n.is_empty()) {
        e.push_str(&format!(
            "      <nonProxyHosts>{}</nonProxyHosts>\n",
            xml(&np)
        ));
    }
    e.push_str("    </proxy>\n");
    e
}

/// The env layer's Maven settings: the mirror of every repository (id [`MIRROR_ID`], its
/// credentials as a `<server>`) and the proxies.
pub(crate) fn settings_xml(
    mirror: Option<&str>,
    http_proxy: Option<&str>,
    https_proxy: Option<&str>,
    no_proxy: Option<&str>,
) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!-- generated by etip for the env layer's build container; it lies under /tmp and is in no image -->\n\
         <settings xmlns=\"http://maven.apache.org/SETTINGS/1.0.0\">\n",
    );
    if let Some(p) = mirror.and_then(split_url) {
        let url = format!("{}://{}{}", p.scheme, p.hostport, p.rest);
        s.push_str(&format!(
            "  <mirrors>\n    <mirror>\n      <id>{MIRROR_ID}</id>\n      <name>etip network.maven_mirror_url</name>\n      \
             <url>{}</url>\n      <mirrorOf>*</mirrorOf>\n    </mirror>\n  </mirrors>\n",
            xml(&url)
        ));
        if let Some(info) = p.userinfo {
            let (u, pw) = info.split_once(':').unwrap_or((info, ""));
            s.push_str(&format!(
                "  <servers>\n    <server>\n      <id>{MIRROR_ID}</id>\n      <username>{}</username>\n      \
                 <password>{}</password>\n    </server>\n  </servers>\n",
                xml(&pct_decode(u)),
                xml(&pct_decode(pw))
            ));
        }
    }
    let proxies: String = [("http", http_proxy), ("https", https_proxy)]
        .iter()
        .filter_map(|(proto, url)| url.map(|u| proxy_element(proto, u, no_proxy)))
        .collect();
    if !proxies.is_empty() {
        s.push_str(&format!("  <proxies>\n{proxies}  </proxies>\n"));
    }
    s.push_str("</settings>\n");
    s
}

/// Makes a PKCS#12 truststore of the JDK's own trust anchors plus every certificate of a PEM
/// bundle (`keytool` imports only the first certificate of a file): `java EtipTrust.java <pem>
/// <store>`, one JVM (about 2 s).
pub const TRUST_JAVA: &str = r#"import java.io.*;
import java.security.KeyStore;
import java.security.cert.*;
import javax.net.ssl.*;

public class EtipTrust {
    public static void main(String[] a) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        int jdk = 0, added = 0;
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init((KeyStore) null);
        for (TrustManager tm : tmf.getTrustManagers())
            if (tm instanceof X509TrustManager)
                for (X509Certificate c : ((X509TrustManager) tm).getAcceptedIssuers())
                    ks.setCertificateEntry("jdk-" + jdk++, c);
        try (InputStream in = new FileInputStream(a[0])) {
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in))
                ks.setCertificateEntry("etip-" + added++, c);
        }
        try (OutputStream out = new FileOutputStream(a[1])) {
            ks.store(out, "changeit".toCharArray());
        }
        System.out.println(added + " certificates of the CA bundle (and the JDK's " + jdk + ")");
    }
}
"#;

/// Asks a repository whether it answers: `python3 -c PROBE_PY URL` sends one `HEAD` request
/// (10 s) with the proxies of the environment (`HTTPS_PROXY`, `NO_PROXY`), as pip would go,
/// trusting the image's CAs plus the PEM file `$ETIP_CA_FILE` (the CA bundle), as Maven's
/// truststore does. Exit 0 when it answers 2xx or 3xx; prints what happened on one line.
pub const PROBE_PY: &str = r#"import os, ssl, sys, urllib.request
url = sys.argv[1]
ctx = ssl.create_default_context()
if os.environ.get("ETIP_CA_FILE"):
    ctx.load_verify_locations(cafile=os.environ["ETIP_CA_FILE"])
try:
    req = urllib.request.Request(url, method="HEAD")
    with urllib.request.urlopen(req, timeout=10, context=ctx) as r:
        print("HTTP %d" % r.status)
        sys.exit(0 if 200 <= r.status < 400 else 1)
except Exception as e:
    print(str(getattr(e, "reason", None) or e).replace("\n", " ")[:300])
    sys.exit(1)
"#;

/// When the env layer runs Maven online.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Online<'a> {
    /// Always, every repository mirrored by this URL.
    Mirror(&'a str),
    /// Against Maven Central, which answered the [`PROBE_PY`] from the env layer's network.
    Central,
    /// As `java.args` say (online without `-o`).
    ByArgs,
}

/// The script the env layer's Maven section sources (see `spec::env_script`): it sets
/// `ETIP_MAVEN_ENV_ARGS` (the generated settings), `ETIP_MAVEN_ONLINE=1` with a mirror or
/// Maven Central (the env layer then runs Maven without `-o`), and with a CA bundle adds a
/// truststore to `MAVEN_OPTS`.
pub(crate) fn env_script(online: Online<'_>, user_settings: bool, ca: bool) -> String {
    let flag = if user_settings { "-gs" } else { "-s" };
    let mut s = format!(
        "# generated by etip: Maven's network settings of the env layer (under {NET_DIR}, in no image)\n\
         ETIP_MAVEN_ENV_ARGS='{flag} {SETTINGS}'\n"
    );
    let online_at = |what: &str| {
        format!(
            "ETIP_MAVEN_ONLINE=1\necho 'etip: Maven runs online in the env layer, {}'\n",
            what.replace('\'', "%27")
        )
    };
    match online {
        Online::Mirror(url) => s.push_str(&online_at(&format!(
            "every repository mirrored by {}",
            super::strip_credentials(url)
        ))),
        Online::Central => s.push_str(&online_at(&format!(
            "against Maven Central ({}), which answered from its network",
            super::MAVEN_CENTRAL
        ))),
        Online::ByArgs => {}
    }
    if ca {
        s.push_str(&format!(
            "if java {TRUST_SOURCE} {NET_DIR}/ca.pem {NET_DIR}/truststore.p12 > {NET_DIR}/trust.log 2>&1; then\n\
             \x20 export MAVEN_OPTS=\"${{MAVEN_OPTS:-}} -Djavax.net.ssl.trustStore={NET_DIR}/truststore.p12 -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=changeit\"\n\
             \x20 echo \"etip: Maven trusts $(cat {NET_DIR}/trust.log)\"\n\
             else\n\
             \x20 cat {NET_DIR}/trust.log\n\
             \x20 echo 'etip: no Java truststore could be made of network.ca_bundle: Maven trusts the JDK certificates only'\n\
             fi\n"
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_hold_mirror_server_and_proxies() {
        let s = settings_xml(
            Some("https://mu:m%40pw@nexus.example:8443/maven2/"),
            Some("http://pu:p%26w@proxy.corp:3128"),
            Some("http://proxy.corp"),
            Some("localhost, .corp,internal.example,10.0.0.0/8,127.0.0.1"),
        );
        assert!(
            s.contains("<url>https://nexus.example:8443/maven2/</url>"),
            "{s}"
        );
        assert!(s.contains("<mirrorOf>*</mirrorOf>") && s.contains("<id>central</id>"));
        assert!(s.contains("<username>mu</username>") && s.contains("<password>m@pw</password>"));
        assert!(s.contains("<password>p&amp;w</password>"), "{s}");
        assert!(
            s.contains("<host>proxy.corp</host>\n      <port>3128</port>"),
            "{s}"
        );
        assert!(s.contains("<protocol>https</protocol>") && s.contains("<port>80</port>"));
        assert!(
            s.contains(
                "<nonProxyHosts>localhost|*.localhost|*.corp|internal.example|*.internal.example|127.0.0.1</nonProxyHosts>"
            ),
            "{s}"
        );
        let none = settings_xml(None, None, None, None);
        assert!(!none.contains("<mirrors>") && !none.contains("<proxies>"));
        assert_eq!(non_proxy_hosts("*,a"), "*");
    }

    #[test]
    fn env_script_goes_online_only_with_a_mirror() {
        let s = env_script(Online::Mirror("https://u:secret@m.example/"), false, true);
        assert!(s.contains("ETIP_MAVEN_ONLINE=1") && s.contains("-s /tmp/etip-net/settings.xml"));
        assert!(s.contains("mirrored by https://m.example/") && !s.contains("secret"));
        assert!(s.contains("trustStore=/tmp/etip-net/truststore.p12"));
        let s = env_script(Online::ByArgs, true, false);
        assert!(!s.contains("ETIP_MAVEN_ONLINE") && s.contains("-gs /tmp/etip-net/settings.xml"));
        assert!(!s.contains("java "));
    }

    /// The probe, run by the host's `python3` against real local servers standing in for Maven
    /// Central: it answers when the server says 200, not when it says 403 or refuses.
    #[test]
    fn central_probe_answers_only_on_success() {
        use std::io::{Read, Write};
        // An HTTP server that answers `status` to one request.
        let serve = |status: &'static str| {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let port = l.local_addr().unwrap().port();
            let t = std::thread::spawn(move || {
                let (mut c, _) = l.accept().unwrap();
                let mut buf = [0u8; 4096];
                let _ = c.read(&mut buf);
                let _ = write!(c, "HTTP/1.0 {status}\r\nContent-Length: 0\r\n\r\n");
            });
            (format!("http://127.0.0.1:{port}/maven2/"), t)
        };
        let probe = |url: &str| {
            let out = std::process::Command::new("python3")
                .args(["-c", PROBE_PY, url])
                .env_remove("http_proxy")
                .env_remove("HTTP_PROXY")
                .output()
                .expect("python3 on the host");
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            (out.status.success(), text)
        };
        let (url, t) = serve("200 OK");
        assert_eq!(probe(&url), (true, "HTTP 200".to_string()));
        t.join().unwrap();
        let (url, t) = serve("403 Forbidden");
        assert_eq!(probe(&url), (false, "Forbidden".to_string()));
        t.join().unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/maven2/", closed.local_addr().unwrap());
        drop(closed);
        let (ok, text) = probe(&url);
        assert!(!ok && text.contains("refused"), "{text}");
    }
}
