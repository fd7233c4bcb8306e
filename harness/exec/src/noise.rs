//! Facts for noise control on Linux, read from `/sys` and `/proc`.
//!
//! Every function takes the root to read from (`/sys`, `/proc`, or a fake tree in tests) and
//! reads small files only, each capped at [`MAX_FILE_BYTES`].
//!
//! - [`cpu_topology`]: the online CPUs grouped into physical cores ([`Core`]), sibling
//!   hyperthreads together, from `devices/system/cpu/cpu*/topology/`.
//! - [`pin_plan`]: one cpuset per concurrent session (container), by the rule "pin each running
//!   container to whole physical cores (sibling hyperthreads together), leaving a core to the
//!   system where the machine has more than two". [`parse_cpu_list`] reads a user's `--cpus`.
//! - [`cpu_model`], [`kernel`]: for the record of a run.
//! - [`read_pressure`], [`stall_share`]: pressure stall information (PSI, Linux 4.20+), to tell
//!   how much of a measured interval some task waited for CPU, I/O or memory.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Largest file read from `/sys` or `/proc` (4 MiB; `/proc/cpuinfo` of a big machine fits).
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// Largest CPU number accepted in a CPU list (Linux's `NR_CPUS` is at most 8192).
pub const MAX_CPU: u32 = 65_535;

/// Why a noise-control fact could not be had.
#[derive(Debug, thiserror::Error)]
pub enum NoiseError {
    /// Reading a file failed.
    #[error("reading {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file's content is not what the kernel writes there.
    #[error("unexpected content in {} (line {line}): {detail}", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        detail: String,
    },
    /// A CPU list (`0-3,6`) is malformed.
    #[error("bad CPU list {input:?} at byte {byte}: {detail}")]
    CpuList {
        input: String,
        byte: usize,
        detail: String,
    },
    /// No CPU to use.
    #[error("no CPU to run on: {detail}")]
    NoCpus { detail: String },
    /// The allowed CPUs include some that are not online.
    #[error("CPUs {cpus:?} are not online on this machine")]
    CpusNotOnline { cpus: Vec<u32> },
}

/// One physical core: its package (socket), its core id there, and its online logical CPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct Core {
    /// `physical_package_id` (-1 where the kernel does not know it).
    pub package: i32,
    /// `core_id` (the lowest CPU number where the kernel gives none).
    pub core: i32,
    /// The online logical CPUs of this core (sibling hyperthreads), ascending.
    pub cpus: Vec<u32>,
}

/// The cpusets for the sessions, and what the plan had to give up, if anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct PinPlan {
    /// One cpuset per session, like `"2,3"` (for `docker run --cpuset-cpus`).
    pub cpusets: Vec<String>,
    /// The physical cores left to the system (not given to any session), as a cpuset.
    pub reserved: Option<String>,
    /// Notes for the user: sessions sharing cores, cores left idle, half cores.
    pub notes: Vec<String>,
}

/// Parse a CPU list as the kernel writes it and as `--cpus` takes it: `0-3,6`, ranges and
/// single numbers separated by commas, surrounding whitespace ignored. An empty list is empty.
/// Returns the CPUs ascending, each once.
pub fn parse_cpu_list(input: &str) -> Result<Vec<u32>, NoiseError> {
    let err = |byte: usize, detail: &str| NoiseError::CpuList {
        input: input.chars().take(80).collect(),
        byte,
        detail: detail.to_string(),
    };
    let mut cpus = BTreeSet::new();
    let trimmed_start = input.len() - input.trim_start().len();
    let body = input.trim();
    if body.is_empty() {
        return Ok(Vec::new());
    }
    let mut offset = trimmed_start;
    for part in body.split(',') {
        let here = offset;
        offset += part.len() + 1;
        let p = part.trim();
        if p.is_empty() {
            return Err(err(here, "empty entry"));
        }
        let number = |s: &str, at: usize| -> Result<u32, NoiseError> {
            let s = s.trim();
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err(at, "not a CPU number"));
            }
            match s.parse::<u32>() {
                Ok(n) if n <= MAX_CPU => Ok(n),
                _ => Err(err(at, &format!("CPU number above {MAX_CPU}"))),
            }
        };
        match p.split_once('-') {
            Some((a, b)) => {
                let lo = number(a, here)?;
                let hi = number(b, here + a.len() + 1)?;
                if lo > hi {
                    return Err(err(here, "range runs backwards"));
                }
                cpus.extend(lo..=hi);
            }
            None => {
                cpus.insert(number(p, here)?);
            }
        }
    }
    Ok(cpus.into_iter().collect())
}

/// Format CPUs as a cpuset: `"2,3"`.
pub fn cpuset(cpus: &[u32]) -> String {
    cpus.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The online CPUs of the machine whose sysfs is at `sys_root` (normally `/sys`), grouped into
/// physical cores, sorted by package and then lowest CPU.
///
/// Online CPUs come from `devices/system/cpu/online` (or, where that file is missing, the
/// `cpuN` folders). CPUs that share a `thread_siblings_list` form one core; where a CPU has no
/// sibling list, CPUs with the same `physical_package_id` and `core_id` do; a CPU with no
/// topology at all is a core of its own.
pub fn cpu_topology(sys_root: &Path) -> Result<Vec<Core>, NoiseError> {
    let cpu_dir = sys_root.join("devices/system/cpu");
    let online_path = cpu_dir.join("online");
    let online = match read_small(&online_path) {
        Ok(text) => parse_cpu_list(&text).map_err(|e| NoiseError::Parse {
            path: online_path.clone(),
            line: 1,
            detail: e.to_string(),
        })?,
        Err(NoiseError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            list_cpu_dirs(&cpu_dir)?
        }
        Err(e) => return Err(e),
    };
    if online.is_empty() {
        return Err(NoiseError::NoCpus {
            detail: format!("no online CPU listed under {}", cpu_dir.display()),
        });
    }
    let online_set: BTreeSet<u32> = online.iter().copied().collect();

    struct Info {
        package: Option<i32>,
        core: Option<i32>,
        siblings: Option<Vec<u32>>,
    }
    let mut info = BTreeMap::new();
    for &cpu in &online {
        let topo = cpu_dir.join(format!("cpu{cpu}/topology"));
        let int = |name: &str| -> Result<Option<i32>, NoiseError> {
            let path = topo.join(name);
            match read_optional(&path)? {
                None => Ok(None),
                Some(text) => text
                    .trim()
                    .parse::<i32>()
                    .map(Some)
                    .map_err(|_| NoiseError::Parse {
                        path,
                        line: 1,
                        detail: format!("not an integer: {:?}", text.trim()),
                    }),
            }
        };
        let package = int("physical_package_id")?;
        let core = int("core_id")?;
        let sib_path = topo.join("thread_siblings_list");
        let siblings = match read_optional(&sib_path)? {
            None => None,
            Some(text) => Some(parse_cpu_list(&text).map_err(|e| NoiseError::Parse {
                path: sib_path.clone(),
                line: 1,
                detail: e.to_string(),
            })?),
        };
        info.insert(
            cpu,
            Info {
                package,
                core,
                siblings,
            },
        );
    }

    // Union-find over the online CPUs.
    let index: BTreeMap<u32, usize> = online.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let mut parent: Vec<usize> = (0..online.len()).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    fn union(parent: &mut [usize], a: usize, b: usize) {
        let (ra, rb) = (find(parent, a), find(parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut by_ids: BTreeMap<(i32, i32), usize> = BTreeMap::new();
    for (&cpu, inf) in &info {
        let Some(&i) = index.get(&cpu) else { continue };
        match &inf.siblings {
            Some(sibs) => {
                for s in sibs.iter().filter(|s| online_set.contains(s)) {
                    if let Some(&j) = index.get(s) {
                        union(&mut parent, i, j);
                    }
                }
            }
            None => {
                if let (Some(p), Some(c)) = (inf.package, inf.core) {
                    match by_ids.get(&(p, c)) {
                        Some(&j) => union(&mut parent, i, j),
                        None => {
                            by_ids.insert((p, c), i);
                        }
                    }
                }
            }
        }
    }
    let mut groups: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for (i, &cpu) in online.iter().enumerate() {
        let root = find(&mut parent, i);
        groups.entry(root).or_default().push(cpu);
    }
    let mut cores: Vec<Core> = groups
        .into_values()
        .map(|cpus| {
            let first = cpus.first().copied().unwrap_or(0);
            let inf = info.get(&first);
            Core {
                package: inf.and_then(|i| i.package).unwrap_or(-1),
                core: inf
                    .and_then(|i| i.core)
                    .unwrap_or(i32::try_from(first).unwrap_or(i32::MAX)),
                cpus,
            }
        })
        .collect();
    cores.sort_by_key(|c| (c.package, c.cpus.first().copied()));
    Ok(cores)
}

/// Plan one cpuset per session: each session gets whole physical cores (siblings together),
/// the same number of cores each.
///
/// - `allowed` (a user's `--cpus`) limits the CPUs used; a CPU in it that is not online is an
///   error. A core only partly allowed is used with its allowed CPUs only, with a note.
/// - One physical core, the first (it holds CPU 0, which takes most interrupts), is left to the
///   system when the machine has more than two physical cores and `allowed` leaves no whole
///   core out anyway. On two cores, two sessions get one core each.
/// - Cores are split evenly in order (so a session's cores sit together, within a package where
///   possible); cores left over by the split stay idle, with a note.
/// - With fewer cores than sessions, sessions share cores round-robin, with a note saying so.
///
/// No sessions give an empty plan.
pub fn pin_plan(
    cores: &[Core],
    allowed: Option<&[u32]>,
    sessions: usize,
) -> Result<PinPlan, NoiseError> {
    let mut notes = Vec::new();
    let machine_cores = cores.iter().filter(|c| !c.cpus.is_empty()).count();
    let mut usable: Vec<Vec<u32>> = Vec::new();
    let mut excluded_whole_core = false;
    match allowed {
        None => usable.extend(
            cores
                .iter()
                .filter(|c| !c.cpus.is_empty())
                .map(|c| c.cpus.clone()),
        ),
        Some(allowed) => {
            let allowed: BTreeSet<u32> = allowed.iter().copied().collect();
            let known: BTreeSet<u32> = cores.iter().flat_map(|c| c.cpus.iter().copied()).collect();
            let unknown: Vec<u32> = allowed.difference(&known).copied().collect();
            if !unknown.is_empty() {
                return Err(NoiseError::CpusNotOnline { cpus: unknown });
            }
            for c in cores.iter().filter(|c| !c.cpus.is_empty()) {
                let part: Vec<u32> = c
                    .cpus
                    .iter()
                    .copied()
                    .filter(|x| allowed.contains(x))
                    .collect();
                if part.is_empty() {
                    excluded_whole_core = true;
                    continue;
                }
                if part.len() < c.cpus.len() {
                    notes.push(format!(
                        "only CPUs {} of physical core {} (CPUs {}) are allowed; its other hyperthreads stay unused",
                        cpuset(&part),
                        c.core,
                        cpuset(&c.cpus)
                    ));
                }
                usable.push(part);
            }
        }
    }
    if usable.is_empty() {
        return Err(NoiseError::NoCpus {
            detail: if allowed.is_some() {
                "the allowed CPU list is empty".into()
            } else {
                "no physical core known".into()
            },
        });
    }
    if sessions == 0 {
        return Ok(PinPlan {
            cpusets: Vec::new(),
            reserved: None,
            notes,
        });
    }
    let mut reserved = None;
    if machine_cores > 2 && !excluded_whole_core && usable.len() > 1 {
        let first = usable.remove(0);
        reserved = Some(cpuset(&first));
    }
    let n = usable.len();
    let mut cpusets = Vec::with_capacity(sessions);
    if n >= sessions {
        let per = n / sessions;
        for s in 0..sessions {
            let mut cpus: Vec<u32> = usable[s * per..(s + 1) * per]
                .iter()
                .flatten()
                .copied()
                .collect();
            cpus.sort_unstable();
            cpusets.push(cpuset(&cpus));
        }
        let idle = n - per * sessions;
        if idle > 0 {
            let idle_cpus: Vec<u32> = usable[per * sessions..].iter().flatten().copied().collect();
            notes.push(format!(
                "{idle} physical core(s) (CPUs {}) stay idle so that every session gets {per}",
                cpuset(&idle_cpus)
            ));
        }
    } else {
        for s in 0..sessions {
            cpusets.push(cpuset(&usable[s % n]));
        }
        notes.push(format!(
            "{sessions} sessions share {n} physical core(s): concurrent sessions disturb each other's timings"
        ));
    }
    Ok(PinPlan {
        cpusets,
        reserved,
        notes,
    })
}

/// The CPU model from `cpuinfo` under `proc_root` (normally `/proc`): the first `model name`
/// (x86), else `Processor` (old ARM), `cpu model` (MIPS) or `cpu` (POWER).
pub fn cpu_model(proc_root: &Path) -> Option<String> {
    let text = read_small(&proc_root.join("cpuinfo")).ok()?;
    for key in ["model name", "Processor", "cpu model", "cpu"] {
        for line in text.lines() {
            if let Some((k, v)) = line.split_once(':')
                && k.trim() == key
                && !v.trim().is_empty()
            {
                return Some(v.trim().to_string());
            }
        }
    }
    None
}

/// The kernel release from `sys/kernel/osrelease` under `proc_root`, e.g. `6.1.0-18-amd64`.
pub fn kernel(proc_root: &Path) -> Option<String> {
    let text = read_small(&proc_root.join("sys/kernel/osrelease")).ok()?;
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// One resource's pressure line pair (`some …` and, where present, `full …`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct ResourcePressure {
    /// `some avg10`: percentage of the last 10 s in which some task was stalled.
    pub some_avg10: f64,
    /// `some total`: microseconds some task was stalled, since boot.
    pub some_total_us: u64,
    /// `full total`: microseconds all non-idle tasks were stalled (absent on old kernels for CPU).
    pub full_total_us: Option<u64>,
}

/// Pressure stall information of the whole machine (or of what `proc_root` shows).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct Pressure {
    pub cpu: Option<ResourcePressure>,
    pub io: Option<ResourcePressure>,
    pub memory: Option<ResourcePressure>,
}

/// Fraction (0 to 1) of an interval in which some task was stalled, per resource.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct PressureShare {
    pub cpu: Option<f64>,
    pub io: Option<f64>,
    pub memory: Option<f64>,
}

/// Read `pressure/{cpu,io,memory}` under `proc_root`. `None` where the kernel has no PSI (no
/// file can be read); a resource whose file is missing or unreadable is `None` inside.
pub fn read_pressure(proc_root: &Path) -> Option<Pressure> {
    let dir = proc_root.join("pressure");
    let one = |name: &str| {
        read_small(&dir.join(name))
            .ok()
            .and_then(|t| parse_pressure(&t))
    };
    let p = Pressure {
        cpu: one("cpu"),
        io: one("io"),
        memory: one("memory"),
    };
    (p.cpu.is_some() || p.io.is_some() || p.memory.is_some()).then_some(p)
}

/// Parse one pressure file: `some avg10=0.00 avg60=0.00 avg300=0.00 total=12345` and `full …`.
fn parse_pressure(text: &str) -> Option<ResourcePressure> {
    let mut some = None;
    let mut full_total = None;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let kind = words.next();
        let mut avg10 = None;
        let mut total = None;
        for w in words {
            match w.split_once('=') {
                Some(("avg10", v)) => {
                    avg10 = v.parse::<f64>().ok().filter(|x| x.is_finite() && *x >= 0.0)
                }
                Some(("total", v)) => total = v.parse::<u64>().ok(),
                _ => {}
            }
        }
        match kind {
            Some("some") => {
                if let (Some(a), Some(t)) = (avg10, total) {
                    some = Some((a, t));
                }
            }
            Some("full") => full_total = total,
            _ => {}
        }
    }
    let (some_avg10, some_total_us) = some?;
    Some(ResourcePressure {
        some_avg10,
        some_total_us,
        full_total_us: full_total,
    })
}

/// The share of `elapsed` in which some task was stalled, from the `total` counters read before
/// and after. `None` for a resource missing in either reading, for a counter that went
/// backwards, and for a zero interval; values are clamped to at most 1.
pub fn stall_share(before: &Pressure, after: &Pressure, elapsed: Duration) -> PressureShare {
    let us = elapsed.as_secs_f64() * 1e6;
    let share = |b: Option<ResourcePressure>, a: Option<ResourcePressure>| -> Option<f64> {
        let (b, a) = (b?, a?);
        if us <= 0.0 {
            return None;
        }
        let delta = a.some_total_us.checked_sub(b.some_total_us)?;
        Some((delta as f64 / us).min(1.0))
    };
    PressureShare {
        cpu: share(before.cpu, after.cpu),
        io: share(before.io, after.io),
        memory: share(before.memory, after.memory),
    }
}

/// Read a small text file, at most [`MAX_FILE_BYTES`].
fn read_small(path: &Path) -> Result<String, NoiseError> {
    let io = |source| NoiseError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    String::from_utf8(bytes).map_err(|e| NoiseError::Parse {
        path: path.to_path_buf(),
        line: 1,
        detail: format!("not UTF-8 ({e})"),
    })
}

/// Like [`read_small`], but a missing file is `None`.
fn read_optional(path: &Path) -> Result<Option<String>, NoiseError> {
    match read_small(path) {
        Ok(t) => Ok(Some(t)),
        Err(NoiseError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The `cpuN` folders under `cpu_dir`, for kernels without an `online` file.
fn list_cpu_dirs(cpu_dir: &Path) -> Result<Vec<u32>, NoiseError> {
    let entries = std::fs::read_dir(cpu_dir).map_err(|source| NoiseError::Io {
        path: cpu_dir.to_path_buf(),
        source,
    })?;
    let mut cpus = BTreeSet::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("cpu")) else {
            continue;
        };
        if !rest.is_empty()
            && rest.bytes().all(|b| b.is_ascii_digit())
            && let Ok(n) = rest.parse::<u32>()
            && n <= MAX_CPU
        {
            cpus.insert(n);
        }
    }
    Ok(cpus.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake `/sys` with `(cpu, package, core, siblings)` entries and an `online` list.
    fn fake_sys(online: Option<&str>, cpus: &[(u32, i32, i32, &str)]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("devices/system/cpu");
        std::fs::create_dir_all(&dir).expect("mkdir");
        if let Some(online) = online {
            std::fs::write(dir.join("online"), format!("{online}\n")).expect("online");
        }
        for &(cpu, package, core, siblings) in cpus {
            let topo = dir.join(format!("cpu{cpu}/topology"));
            std::fs::create_dir_all(&topo).expect("mkdir");
            std::fs::write(topo.join("physical_package_id"), format!("{package}\n")).expect("w");
            std::fs::write(topo.join("core_id"), format!("{core}\n")).expect("w");
            std::fs::write(topo.join("thread_siblings_list"), format!("{siblings}\n")).expect("w");
        }
        tmp
    }

    fn core(package: i32, core: i32, cpus: &[u32]) -> Core {
        Core {
            package,
            core,
            cpus: cpus.to_vec(),
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,6").expect("ok"), [0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list(" 6, 0-1 ,1\n").expect("ok"), [0, 1, 6]);
        assert_eq!(parse_cpu_list("\n").expect("ok"), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("5").expect("ok"), [5]);
        for bad in [
            "a",
            "1,,2",
            "3-1",
            "1-",
            "-1",
            "0-99999999",
            "1 2",
            "0-3:2/4",
            ",",
        ] {
            assert!(parse_cpu_list(bad).is_err(), "{bad:?} should be rejected");
        }
        match parse_cpu_list("0,x") {
            Err(NoiseError::CpuList { byte, .. }) => assert_eq!(byte, 2),
            other => panic!("{other:?}"),
        }
        assert_eq!(cpuset(&[2, 3]), "2,3");
    }

    #[test]
    fn topology_groups_hyperthreads() {
        // 4 cores, 8 threads, siblings n and n+4; cpu 7 offline.
        let cpus: Vec<(u32, i32, i32, String)> = (0..8)
            .map(|c| (c, 0, (c % 4) as i32, format!("{},{}", c % 4, c % 4 + 4)))
            .collect();
        let refs: Vec<(u32, i32, i32, &str)> = cpus
            .iter()
            .map(|(a, b, c, d)| (*a, *b, *c, d.as_str()))
            .collect();
        let sys = fake_sys(Some("0-6"), &refs);
        let cores = cpu_topology(sys.path()).expect("topology");
        assert_eq!(
            cores,
            [
                core(0, 0, &[0, 4]),
                core(0, 1, &[1, 5]),
                core(0, 2, &[2, 6]),
                core(0, 3, &[3])
            ]
        );
    }

    #[test]
    fn topology_two_packages_and_fallbacks() {
        // Two packages with equal core ids; no online file (cpu folders are listed instead).
        let sys = fake_sys(
            None,
            &[
                (0, 0, 0, "0"),
                (1, 0, 1, "1"),
                (2, 1, 0, "2"),
                (3, 1, 1, "3"),
            ],
        );
        // cpu4 without topology; also a non-CPU folder.
        std::fs::create_dir_all(sys.path().join("devices/system/cpu/cpu4")).expect("mkdir");
        std::fs::create_dir_all(sys.path().join("devices/system/cpu/cpufreq")).expect("mkdir");
        let cores = cpu_topology(sys.path()).expect("topology");
        assert_eq!(
            cores,
            [
                core(-1, 4, &[4]),
                core(0, 0, &[0]),
                core(0, 1, &[1]),
                core(1, 0, &[2]),
                core(1, 1, &[3])
            ]
        );
    }

    #[test]
    fn topology_errors() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert!(matches!(
            cpu_topology(tmp.path()),
            Err(NoiseError::Io { .. })
        ));
        let sys = fake_sys(Some("0-x"), &[]);
        match cpu_topology(sys.path()) {
            Err(e @ NoiseError::Parse { .. }) => assert!(e.to_string().contains("online"), "{e}"),
            other => panic!("{other:?}"),
        }
        let sys = fake_sys(Some(""), &[]);
        assert!(matches!(
            cpu_topology(sys.path()),
            Err(NoiseError::NoCpus { .. })
        ));
        let sys = fake_sys(Some("0"), &[(0, 0, 0, "0")]);
        std::fs::write(
            sys.path().join("devices/system/cpu/cpu0/topology/core_id"),
            "zero",
        )
        .expect("w");
        assert!(matches!(
            cpu_topology(sys.path()),
            Err(NoiseError::Parse { .. })
        ));
    }

    #[test]
    fn plan_two_cores_two_sessions() {
        let cores = [core(0, 0, &[0]), core(0, 1, &[1])];
        let plan = pin_plan(&cores, None, 2).expect("plan");
        assert_eq!(plan.cpusets, ["0", "1"]);
        assert_eq!(plan.reserved, None);
        assert!(plan.notes.is_empty());
        let plan = pin_plan(&cores, None, 1).expect("plan");
        assert_eq!(plan.cpusets, ["0,1"]);
    }

    #[test]
    fn plan_reserves_a_core_on_bigger_machines() {
        let cores = [
            core(0, 0, &[0, 4]),
            core(0, 1, &[1, 5]),
            core(0, 2, &[2, 6]),
            core(0, 3, &[3, 7]),
        ];
        let plan = pin_plan(&cores, None, 2).expect("plan");
        assert_eq!(plan.reserved.as_deref(), Some("0,4"));
        assert_eq!(plan.cpusets, ["1,5", "2,6"]);
        assert_eq!(plan.notes.len(), 1, "{:?}", plan.notes); // core 3 idle
        let plan = pin_plan(&cores, None, 3).expect("plan");
        assert_eq!(plan.cpusets, ["1,5", "2,6", "3,7"]);
        assert!(plan.notes.is_empty());
        let plan = pin_plan(&cores, None, 1).expect("plan");
        assert_eq!(plan.cpusets, ["1,2,3,5,6,7"]);
        // More sessions than cores: shared, with a note.
        let plan = pin_plan(&cores, None, 5).expect("plan");
        assert_eq!(plan.cpusets, ["1,5", "2,6", "3,7", "1,5", "2,6"]);
        assert!(
            plan.notes.iter().any(|n| n.contains("share")),
            "{:?}",
            plan.notes
        );
        assert!(pin_plan(&cores, None, 0).expect("plan").cpusets.is_empty());
    }

    #[test]
    fn plan_with_allowed_cpus() {
        let cores = [
            core(0, 0, &[0, 4]),
            core(0, 1, &[1, 5]),
            core(0, 2, &[2, 6]),
            core(0, 3, &[3, 7]),
        ];
        // A whole core (0) left out by the user: nothing more is reserved.
        let allowed = parse_cpu_list("1-3,5-7").expect("list");
        let plan = pin_plan(&cores, Some(&allowed), 3).expect("plan");
        assert_eq!(plan.reserved, None);
        assert_eq!(plan.cpusets, ["1,5", "2,6", "3,7"]);
        // Only one thread of each core: used, with notes; all cores touched, so one is reserved.
        let allowed = parse_cpu_list("0-3").expect("list");
        let plan = pin_plan(&cores, Some(&allowed), 3).expect("plan");
        assert_eq!(plan.reserved.as_deref(), Some("0"));
        assert_eq!(plan.cpusets, ["1", "2", "3"]);
        assert_eq!(plan.notes.len(), 4, "{:?}", plan.notes);
        // Unknown CPUs and empty lists are errors.
        assert!(matches!(
            pin_plan(&cores, Some(&[9]), 1),
            Err(NoiseError::CpusNotOnline { .. })
        ));
        assert!(matches!(
            pin_plan(&cores, Some(&[]), 1),
            Err(NoiseError::NoCpus { .. })
        ));
        assert!(matches!(
            pin_plan(&[], None, 1),
            Err(NoiseError::NoCpus { .. })
        ));
    }

    #[test]
    fn model_and_kernel() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert_eq!(cpu_model(tmp.path()), None);
        assert_eq!(kernel(tmp.path()), None);
        std::fs::write(
            tmp.path().join("cpuinfo"),
            "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n\nprocessor\t: 1\nmodel name\t: other\n",
        )
        .expect("w");
        std::fs::create_dir_all(tmp.path().join("sys/kernel")).expect("mkdir");
        std::fs::write(tmp.path().join("sys/kernel/osrelease"), "6.1.0-18-amd64\n").expect("w");
        assert_eq!(
            cpu_model(tmp.path()).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        assert_eq!(kernel(tmp.path()).as_deref(), Some("6.1.0-18-amd64"));
        std::fs::write(
            tmp.path().join("cpuinfo"),
            "processor\t: 0\ncpu\t\t: POWER9 (architected), altivec supported\n",
        )
        .expect("w");
        assert_eq!(
            cpu_model(tmp.path()).as_deref(),
            Some("POWER9 (architected), altivec supported")
        );
        std::fs::write(tmp.path().join("cpuinfo"), [0xff, 0xfe]).expect("w");
        assert_eq!(cpu_model(tmp.path()), None);
    }

    fn write_pressure(root: &Path, cpu: u64, io: u64, memory: Option<u64>) {
        let dir = root.join("pressure");
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join("cpu"),
            format!("some avg10=27.38 avg60=18.63 avg300=8.70 total={cpu}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
        )
        .expect("w");
        // An old kernel's io file without a trailing newline.
        std::fs::write(
            dir.join("io"),
            format!("some avg10=0.66 avg60=0.36 avg300=0.44 total={io}"),
        )
        .expect("w");
        match memory {
            Some(m) => std::fs::write(
                dir.join("memory"),
                format!("some avg10=0.00 avg60=0.00 avg300=0.00 total={m}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"),
            )
            .expect("w"),
            None => {
                let _ = std::fs::remove_file(dir.join("memory"));
            }
        }
    }

    #[test]
    fn pressure_and_stall_share() {
        let tmp = tempfile::tempdir().expect("tempdir");
        assert_eq!(read_pressure(tmp.path()), None);
        write_pressure(tmp.path(), 1_000_000, 50, Some(7));
        let before = read_pressure(tmp.path()).expect("psi");
        let cpu = before.cpu.expect("cpu");
        assert_eq!(
            (cpu.some_avg10, cpu.some_total_us, cpu.full_total_us),
            (27.38, 1_000_000, Some(0))
        );
        assert_eq!(before.io.expect("io").full_total_us, None);
        assert_eq!(before.memory.expect("memory").full_total_us, Some(5));
        write_pressure(tmp.path(), 1_500_000, 40, None);
        let after = read_pressure(tmp.path()).expect("psi");
        assert_eq!(after.memory, None);
        let share = stall_share(&before, &after, Duration::from_secs(2));
        assert_eq!(share.cpu, Some(0.25));
        assert_eq!(share.io, None, "counter went backwards");
        assert_eq!(share.memory, None);
        let share = stall_share(&before, &after, Duration::ZERO);
        assert_eq!(share.cpu, None);
        let share = stall_share(&before, &after, Duration::from_millis(100));
        assert_eq!(share.cpu, Some(1.0), "clamped");
        let json = serde_json::to_string(&after).expect("json");
        assert!(json.contains("\"some_total_us\":1500000"), "{json}");
        // Garbage is not PSI.
        std::fs::write(tmp.path().join("pressure/cpu"), "some avg10=x total=1\n").expect("w");
        std::fs::write(tmp.path().join("pressure/io"), "").expect("w");
        assert_eq!(read_pressure(tmp.path()), None);
    }

    /// On this machine's real /sys and /proc: must hold wherever the tests run (PSI may be absent).
    #[test]
    fn smoke_on_this_machine() {
        let sys = Path::new("/sys");
        let proc = Path::new("/proc");
        if !sys.join("devices/system/cpu").exists() {
            return; // not Linux, or no sysfs mounted
        }
        let cores = cpu_topology(sys).expect("topology of this machine");
        assert!(!cores.is_empty());
        let cpus: usize = cores.iter().map(|c| c.cpus.len()).sum();
        assert!(cpus >= 1);
        let plan = pin_plan(&cores, None, 2).expect("plan");
        assert_eq!(plan.cpusets.len(), 2);
        for set in &plan.cpusets {
            assert!(!parse_cpu_list(set).expect("cpuset parses").is_empty());
        }
        let _ = cpu_model(proc);
        assert!(kernel(proc).is_some(), "/proc/sys/kernel/osrelease");
        if let Some(before) = read_pressure(proc) {
            std::thread::sleep(Duration::from_millis(20));
            if let Some(after) = read_pressure(proc) {
                let share = stall_share(&before, &after, Duration::from_millis(20));
                for s in [share.cpu, share.io, share.memory].into_iter().flatten() {
                    assert!((0.0..=1.0).contains(&s), "{s}");
                }
            }
        }
    }
}
