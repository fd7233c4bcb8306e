//! The coordinator's loop: place units on nodes, watch their tasks, collect replies, retry what
//! the infrastructure lost. Runs on the calling thread, which alone writes the ledger.

use crate::place::{self, Constraint};
use crate::{LABEL_KEY, LABEL_LEDGER, LABEL_NAMESPACE, LABEL_UNIT, Swarm, short_digest};
use etip_core::cancel::CancelToken;
use etip_core::node::Node;
use etip_core::unit::wire::{self, Reply};
use etip_core::unit::{
    BackendError, Ledger, RunSummary, UnitError, UnitEvent, UnitOutput, WorkUnit,
};
use etip_docker::swarm::{SwarmNode, TaskPhase, UNIT_FILE, UnitService};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};

/// How long the manager may stay unreachable before the run gives up (its units stay `running`
/// in the ledger; the next run adopts their services).
const MANAGER_GRACE: Duration = Duration::from_secs(60);
/// Time limit of reading a finished task's log.
const LOG_TIMEOUT: Duration = Duration::from_secs(60);

/// A unit waiting for a node.
struct Pending {
    i: usize,
    /// Attempts already made in this run.
    tries: u32,
    /// Nodes that lost or refused the unit: tried last.
    excluded: BTreeSet<String>,
    /// Since when it waits for a node.
    since: Instant,
}

/// A unit's service on the swarm.
struct Flight {
    i: usize,
    name: String,
    /// The node it was placed on.
    node: Option<String>,
    started: Instant,
    tries: u32,
    excluded: BTreeSet<String>,
}

/// What became of a flight in one look.
enum Look {
    Waiting,
    Done(UnitOutput),
    /// The attempt failed; the node to avoid next time.
    Lost(UnitError, Option<String>),
}

pub(crate) struct Coordinator<'s, 'l, 'e> {
    swarm: &'s Swarm,
    units: &'s [WorkUnit],
    ledger: &'l mut dyn Ledger,
    events: &'e mut dyn FnMut(UnitEvent<'_>),
    placement: Vec<Result<Vec<Constraint>, String>>,
    pending: VecDeque<Pending>,
    flights: Vec<Flight>,
    started: BTreeSet<usize>,
    summary: RunSummary,
    turn: usize,
    ledger_label: String,
}

fn backend_err(detail: impl std::fmt::Display) -> BackendError {
    BackendError::Backend {
        backend: "swarm",
        detail: detail.to_string(),
    }
}

impl<'s, 'l, 'e> Coordinator<'s, 'l, 'e> {
    pub(crate) fn new(
        swarm: &'s Swarm,
        units: &'s [WorkUnit],
        ledger: &'l mut dyn Ledger,
        events: &'e mut dyn FnMut(UnitEvent<'_>),
    ) -> Self {
        let placement = units
            .iter()
            .map(|u| place::parse_all(&u.placement).map_err(|e| e.to_string()))
            .collect();
        Coordinator {
            swarm,
            units,
            ledger,
            events,
            placement,
            pending: VecDeque::new(),
            flights: Vec::new(),
            started: BTreeSet::new(),
            summary: RunSummary::default(),
            turn: 0,
            ledger_label: short_digest(&swarm.cfg.ledger),
        }
    }

    fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.swarm.rt.block_on(f)
    }

    pub(crate) fn run(mut self, cancel: &CancelToken) -> Result<RunSummary, BackendError> {
        self.reuse()?;
        self.adopt()?;
        let mut unreachable_since: Option<Instant> = None;
        loop {
            if cancel.is_cancelled() {
                self.cancel_all()?;
                break;
            }
            let nodes = match self.block_on(self.swarm.manager.swarm_nodes()) {
                Ok(n) => {
                    unreachable_since = None;
                    n
                }
                Err(e) => {
                    let since = *unreachable_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > MANAGER_GRACE {
                        return Err(backend_err(format!(
                            "the manager has not answered for {}s: {e}",
                            MANAGER_GRACE.as_secs()
                        )));
                    }
                    tracing::warn!("the swarm's manager did not answer: {e}");
                    std::thread::sleep(self.swarm.cfg.poll);
                    continue;
                }
            };
            self.look(&nodes)?;
            if !cancel.is_cancelled() {
                self.submit(&nodes)?;
            }
            if self.flights.is_empty() && self.pending.is_empty() {
                break;
            }
            std::thread::sleep(self.swarm.cfg.poll);
        }
        self.summary.not_started = self.pending.len();
        Ok(self.summary)
    }

    /// Units whose output the ledger holds under the same key are reported, not run.
    fn reuse(&mut self) -> Result<(), BackendError> {
        for (i, unit) in self.units.iter().enumerate() {
            let record = self.ledger.unit(&unit.id())?;
            match record.as_ref().and_then(|r| r.reusable_for(unit)) {
                Some(output) => {
                    (self.events)(UnitEvent::Reused(unit, output));
                    self.summary.reused += 1;
                }
                None => self.pending.push_back(Pending {
                    i,
                    tries: 0,
                    excluded: BTreeSet::new(),
                    since: Instant::now(),
                }),
            }
        }
        Ok(())
    }

    /// The labels of unit `i`'s services.
    fn labels(&self, i: usize) -> HashMap<String, String> {
        let unit = &self.units[i];
        HashMap::from([
            (
                LABEL_NAMESPACE.to_string(),
                self.swarm.cfg.namespace.clone(),
            ),
            (LABEL_LEDGER.to_string(), self.ledger_label.clone()),
            (LABEL_UNIT.to_string(), short_digest(&unit.id())),
            (LABEL_KEY.to_string(), short_digest(&unit.key)),
        ])
    }

    /// Services this ledger left on the swarm (its coordinator was killed): those of a unit asked
    /// for again under the same key are watched as if started now; the others are removed.
    fn adopt(&mut self) -> Result<(), BackendError> {
        let filter = [
            format!("{LABEL_NAMESPACE}={}", self.swarm.cfg.namespace),
            format!("{LABEL_LEDGER}={}", self.ledger_label),
        ];
        let services = self
            .block_on(self.swarm.manager.unit_services(&filter))
            .map_err(backend_err)?;
        for service in services {
            let found = self.pending.iter().position(|p| {
                let want = self.labels(p.i);
                [LABEL_UNIT, LABEL_KEY]
                    .iter()
                    .all(|k| service.labels.get(*k) == want.get(*k))
            });
            match found.and_then(|at| self.pending.remove(at)) {
                Some(p) => {
                    let node = self
                        .block_on(self.swarm.manager.service_tasks(&service.name))
                        .ok()
                        .and_then(|t| t.into_iter().find_map(|t| t.node));
                    tracing::info!(
                        "{}: watching the service {} a previous run left",
                        self.units[p.i].id(),
                        service.name
                    );
                    self.started.insert(p.i);
                    (self.events)(UnitEvent::Started(&self.units[p.i]));
                    self.flights.push(Flight {
                        i: p.i,
                        name: service.name,
                        node,
                        started: Instant::now(),
                        tries: 1,
                        excluded: p.excluded,
                    });
                }
                None => {
                    tracing::info!("removing {}: no unit of this run", service.name);
                    self.block_on(self.swarm.manager.remove_unit_service(&service.name))
                        .map_err(backend_err)?;
                }
            }
        }
        Ok(())
    }

    /// Starts waiting units on free nodes.
    fn submit(&mut self, nodes: &[SwarmNode]) -> Result<(), BackendError> {
        let mut busy: HashMap<String, usize> = HashMap::new();
        for f in &self.flights {
            if let Some(n) = &f.node {
                *busy.entry(n.clone()).or_default() += 1;
            }
        }
        let slots = self.swarm.cfg.slots_per_node.max(1);
        let most = match self.swarm.cfg.max_units {
            0 => usize::MAX,
            n => n,
        };
        let mut waiting = VecDeque::new();
        while let Some(p) = self.pending.pop_front() {
            if self.flights.len() >= most {
                waiting.push_back(p);
                continue;
            }
            let own = match &self.placement[p.i] {
                Ok(c) => c.clone(),
                Err(why) => {
                    let e = UnitError::infrastructure(format!("placement: {why}"));
                    self.give_up(p.i, e)?;
                    continue;
                }
            };
            let eligible: Vec<&SwarmNode> = nodes
                .iter()
                .filter(|n| {
                    n.usable && place::meets(n, &self.swarm.constraints) && place::meets(n, &own)
                })
                .collect();
            if eligible.is_empty() {
                if p.since.elapsed() > self.swarm.cfg.placement_timeout {
                    let mut all = self.swarm.cfg.constraints.clone();
                    all.extend(self.units[p.i].placement.iter().cloned());
                    let e = UnitError::infrastructure(format!(
                        "no usable node meets {} (waited {}s)",
                        crate::describe(&all),
                        self.swarm.cfg.placement_timeout.as_secs()
                    ));
                    self.give_up(p.i, e)?;
                } else {
                    waiting.push_back(p);
                }
                continue;
            }
            let n = eligible.len();
            let choice = (0..n)
                .map(|k| eligible[(k + self.turn) % n])
                .filter(|node| busy.get(node.id.as_str()).copied().unwrap_or(0) < slots)
                .min_by_key(|node| {
                    (
                        p.excluded.contains(&node.id),
                        busy.get(node.id.as_str()).copied().unwrap_or(0),
                    )
                });
            let Some(node) = choice else {
                waiting.push_back(p);
                continue;
            };
            self.turn = self.turn.wrapping_add(1);
            *busy.entry(node.id.clone()).or_default() += 1;
            self.start(p, node)?;
        }
        self.pending = waiting;
        Ok(())
    }

    /// One attempt of a unit on `node`.
    fn start(&mut self, p: Pending, node: &SwarmNode) -> Result<(), BackendError> {
        let unit = &self.units[p.i];
        let record = self.ledger.start(unit)?;
        if self.started.insert(p.i) {
            (self.events)(UnitEvent::Started(unit));
        }
        let name = format!(
            "etip-{}-{}-{}",
            &self.ledger_label[..8],
            &short_digest(&unit.id())[..12],
            record.attempts
        );
        let cfg = &self.swarm.cfg;
        let mut constraints: Vec<String> = self
            .swarm
            .constraints
            .iter()
            .map(|c| c.as_str().to_string())
            .collect();
        constraints.extend(unit.placement.iter().cloned());
        constraints.push(format!("node.id=={}", node.id));
        let mut command = cfg.command.clone();
        command.push(UNIT_FILE.into());
        let mut env = vec![
            "ETIP_NODE_ID={{.Node.ID}}".to_string(),
            "ETIP_NODE_HOSTNAME={{.Node.Hostname}}".to_string(),
        ];
        if let Some(cpus) = node.labels.get(etip_core::node::CPUS_LABEL) {
            env.push(format!("{}={cpus}", etip_core::node::CPUS_ENV));
        }
        env.extend(cfg.env.iter().cloned());
        let spec = UnitService {
            name: name.clone(),
            image: cfg.runner_image.clone(),
            command,
            env,
            labels: self.labels(p.i),
            constraints,
            node_socket: cfg.node_socket.clone(),
            unit: serde_json::to_vec(unit).map_err(backend_err)?,
        };
        tracing::info!("{}: attempt {} on node {}", unit.id(), p.tries + 1, node.id);
        let flight = Flight {
            i: p.i,
            name,
            node: Some(node.id.clone()),
            started: Instant::now(),
            tries: p.tries + 1,
            excluded: p.excluded,
        };
        match self.block_on(self.swarm.manager.create_unit_service(&spec)) {
            Ok(_) => self.flights.push(flight),
            Err(e) => {
                let e = UnitError::infrastructure(format!("starting the unit's service: {e}"));
                self.attempt_failed(flight, e, None)?;
            }
        }
        Ok(())
    }

    /// Looks at every unit's service once.
    fn look(&mut self, nodes: &[SwarmNode]) -> Result<(), BackendError> {
        let flights = std::mem::take(&mut self.flights);
        for mut flight in flights {
            match self.look_at(&mut flight, nodes) {
                Look::Waiting => self.flights.push(flight),
                Look::Done(mut output) => {
                    let unit = &self.units[flight.i];
                    let node = node_of(&output, nodes, flight.node.as_deref());
                    output.set_node(&node);
                    self.ledger.finish(unit, &output)?;
                    self.remove(&flight.name);
                    self.summary.ran += 1;
                    (self.events)(UnitEvent::Finished(unit, &output));
                }
                Look::Lost(e, avoid) => {
                    self.remove(&flight.name);
                    self.attempt_failed(flight, e, avoid)?;
                }
            }
        }
        Ok(())
    }

    fn look_at(&self, flight: &mut Flight, nodes: &[SwarmNode]) -> Look {
        let cfg = &self.swarm.cfg;
        let tasks = match self.block_on(self.swarm.manager.service_tasks(&flight.name)) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!("{}: reading its tasks: {e}", flight.name);
                return Look::Waiting;
            }
        };
        let Some(task) = tasks
            .into_iter()
            .max_by_key(|t| t.phase == TaskPhase::Complete)
        else {
            if flight.started.elapsed() > cfg.placement_timeout {
                return Look::Lost(
                    UnitError::infrastructure("the unit's service has no task (removed?)"),
                    None,
                );
            }
            return Look::Waiting;
        };
        if task.node.is_some() {
            flight.node = task.node.clone();
        }
        let on = flight.node.clone().unwrap_or_else(|| "no node".into());
        // The attempt is lost on the node it was given, for `why`.
        let lost = |why: String| Look::Lost(UnitError::infrastructure(why), flight.node.clone());
        match task.phase {
            TaskPhase::Complete => match self.collect(flight) {
                Ok(output) => Look::Done(output),
                Err(e) => Look::Lost(e, flight.node.clone()),
            },
            TaskPhase::Ended => {
                let code = task
                    .exit_code
                    .map(|c| format!(", exit code {c}"))
                    .unwrap_or_default();
                let stderr = self.stderr_tail(&flight.name);
                lost(format!(
                    "the task {} on node {on}{code}: {}{stderr}",
                    task.state, task.message
                ))
            }
            _ if flight.started.elapsed() > cfg.unit_timeout => lost(format!(
                "past its time limit of {}s on node {on}",
                cfg.unit_timeout.as_secs()
            )),
            TaskPhase::Running => {
                match nodes.iter().find(|n| Some(&n.id) == flight.node.as_ref()) {
                    Some(n) if n.state == "ready" => Look::Waiting,
                    Some(n) => lost(format!("node {on} is {}", n.state)),
                    None => lost(format!("node {on} left the swarm")),
                }
            }
            TaskPhase::Waiting if flight.started.elapsed() > cfg.placement_timeout => {
                lost(format!("the swarm did not start it: {}", task.message))
            }
            TaskPhase::Waiting => Look::Waiting,
        }
    }

    /// The reply in a completed task's log, believed only when it is this unit's.
    fn collect(&self, flight: &Flight) -> Result<UnitOutput, UnitError> {
        let unit = &self.units[flight.i];
        let log = self
            .block_on(
                self.swarm
                    .manager
                    .service_output(&flight.name, true, LOG_TIMEOUT),
            )
            .map_err(|e| UnitError::infrastructure(format!("reading the unit's reply: {e}")))?;
        let refused = |e: wire::WireError| UnitError::infrastructure(format!("{e}"));
        let reply: Reply = wire::read(&log).map_err(refused)?;
        reply.check(unit).map_err(refused)?;
        check_images(unit, &reply).map_err(UnitError::infrastructure)?;
        let flight_secs = flight.started.elapsed().as_secs_f64();
        tracing::info!(
            "{}: {:.1}s on the swarm, {:.1}s in the runner: {:.1}s of placement, start and collection",
            unit.id(),
            flight_secs,
            reply.secs,
            flight_secs - reply.secs
        );
        let mut result = reply.clone().into_result();
        if let Ok(output) = &mut result {
            output.set_node(&reply.node);
        }
        result
    }

    /// The last lines the task wrote to standard error (a crash's message), as ` (...)`.
    fn stderr_tail(&self, service: &str) -> String {
        let text = self
            .block_on(
                self.swarm
                    .manager
                    .service_output(service, false, Duration::from_secs(10)),
            )
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
        if tail.is_empty() {
            String::new()
        } else {
            format!(" ({})", etip_core::clip::clip(&tail, 600))
        }
    }

    fn remove(&self, service: &str) {
        if let Err(e) = self.block_on(self.swarm.manager.remove_unit_service(service)) {
            tracing::warn!("removing {service}: {e}");
        }
    }

    /// Records a failed attempt; the unit runs again (on another node when one is free) unless it
    /// used its attempts.
    fn attempt_failed(
        &mut self,
        flight: Flight,
        error: UnitError,
        avoid: Option<String>,
    ) -> Result<(), BackendError> {
        let unit = &self.units[flight.i];
        self.ledger.fail(unit, &error)?;
        if flight.tries >= self.swarm.cfg.max_attempts {
            tracing::warn!(
                "{}: attempt {} failed, giving up: {error}",
                unit.id(),
                flight.tries
            );
            self.summary.failed += 1;
            (self.events)(UnitEvent::Failed(unit, &error));
            return Ok(());
        }
        tracing::warn!(
            "{}: attempt {} failed, running it again: {error}",
            unit.id(),
            flight.tries
        );
        let mut excluded = flight.excluded;
        excluded.extend(avoid);
        self.pending.push_front(Pending {
            i: flight.i,
            tries: flight.tries,
            excluded,
            since: Instant::now(),
        });
        Ok(())
    }

    /// A unit that cannot run at all in this run.
    fn give_up(&mut self, i: usize, error: UnitError) -> Result<(), BackendError> {
        let unit = &self.units[i];
        if self.started.insert(i) {
            self.ledger.start(unit)?;
            (self.events)(UnitEvent::Started(unit));
        }
        self.ledger.fail(unit, &error)?;
        self.summary.failed += 1;
        (self.events)(UnitEvent::Failed(unit, &error));
        Ok(())
    }

    /// Stops every running unit: its service is removed, the unit runs again next time.
    fn cancel_all(&mut self) -> Result<(), BackendError> {
        for flight in std::mem::take(&mut self.flights) {
            self.remove(&flight.name);
            let unit = &self.units[flight.i];
            let error = UnitError::Cancelled;
            self.ledger.fail(unit, &error)?;
            self.summary.failed += 1;
            (self.events)(UnitEvent::Failed(unit, &error));
        }
        Ok(())
    }
}

/// A reply that names an image by digest must have run those bytes.
fn check_images(unit: &WorkUnit, reply: &Reply) -> Result<(), String> {
    for (reference, digest) in &reply.images {
        if let Some((_, want)) = reference.split_once('@')
            && want != digest
        {
            return Err(format!(
                "the node ran {reference} as {digest}, not as its digest"
            ));
        }
        if !unit.images.iter().any(|i| i == reference) {
            return Err(format!(
                "the node ran {reference}, which the unit does not name"
            ));
        }
    }
    Ok(())
}

/// The node of a reply with the labels the manager knows it by.
fn node_of(output: &UnitOutput, nodes: &[SwarmNode], placed: Option<&str>) -> Node {
    let mut node: Node = output
        .record
        .get("node")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    if node.id.is_empty() {
        node.id = placed.unwrap_or_default().to_string();
    }
    if let Some(n) = nodes.iter().find(|n| n.id == node.id) {
        node.labels = n.labels.clone();
        if node.hostname.is_empty() {
            node.hostname = n.hostname.clone();
        }
        if node.engine_version.is_empty() {
            node.engine_version = n.engine_version.clone();
        }
    }
    node
}

#[cfg(test)]
mod tests {
    use super::*;
    use etip_core::unit::Stage;

    #[test]
    fn a_reply_must_have_run_the_units_images_by_their_digest() {
        let r = "reg:5000/etip/x@sha256:aa";
        let unit = WorkUnit::new(
            Stage::Eval,
            "x",
            serde_json::json!({}),
            serde_json::json!({}),
            "k",
        )
        .with_images([r.to_string()]);
        let mut reply = Reply::new(&unit, Node::default(), Err(UnitError::Cancelled));
        assert_eq!(check_images(&unit, &reply), Ok(()));
        reply.images.insert(r.into(), "sha256:aa".into());
        assert_eq!(check_images(&unit, &reply), Ok(()));
        reply.images.insert(r.into(), "sha256:bb".into());
        assert!(check_images(&unit, &reply).is_err());
        reply.images.clear();
        reply.images.insert("other:1".into(), "sha256:cc".into());
        assert!(check_images(&unit, &reply).is_err());
    }
}
