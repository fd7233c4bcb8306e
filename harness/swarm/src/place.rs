//! Where a unit may run: placement constraints in Swarm's syntax, evaluated by the coordinator.
//!
//! etip places each unit itself — on a node that meets the run's and the unit's constraints, has
//! a free slot and has not lost the unit before — and pins the service to that node
//! (`node.id==...`), passing the constraints on to the swarm as well. Placing itself is what keeps
//! timed work apart: Swarm would happily put two units on one node, and two measurements sharing
//! a machine's cores disturb each other.
//!
//! Understood forms (`==` or `!=`): `node.id`, `node.hostname`, `node.role` (`manager`,
//! `worker`), `node.platform.arch`, `node.labels.<key>`.

use etip_docker::swarm::SwarmNode;

/// One `field==value` or `field!=value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    field: Field,
    equal: bool,
    value: String,
    text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Id,
    Hostname,
    Role,
    Arch,
    Label(String),
}

/// A constraint etip cannot evaluate.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "placement constraint `{0}`: etip understands node.id, node.hostname, node.role, node.platform.arch and node.labels.<key> with == or !="
)]
pub struct ConstraintError(pub String);

impl Constraint {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<Constraint, ConstraintError> {
        let bad = || ConstraintError(text.to_string());
        let (field, equal, value) = if let Some((f, v)) = text.split_once("==") {
            (f, true, v)
        } else if let Some((f, v)) = text.split_once("!=") {
            (f, false, v)
        } else {
            return Err(bad());
        };
        let (field, value) = (field.trim(), value.trim());
        if value.is_empty() {
            return Err(bad());
        }
        let field = match field {
            "node.id" => Field::Id,
            "node.hostname" => Field::Hostname,
            "node.role" => Field::Role,
            "node.platform.arch" => Field::Arch,
            f => match f.strip_prefix("node.labels.") {
                Some(k) if !k.is_empty() => Field::Label(k.to_string()),
                _ => return Err(bad()),
            },
        };
        let op = if equal { "==" } else { "!=" };
        let text = format!("{}{op}{value}", field_name(&field));
        Ok(Constraint {
            field,
            equal,
            value: value.to_string(),
            text,
        })
    }

    /// Whether `node` meets the constraint.
    pub fn holds(&self, node: &SwarmNode) -> bool {
        let actual: Option<String> = match &self.field {
            Field::Id => Some(node.id.clone()),
            Field::Hostname => Some(node.hostname.clone()),
            Field::Role => Some(if node.manager { "manager" } else { "worker" }.to_string()),
            Field::Arch => Some(arch_name(&node.architecture).to_string()),
            Field::Label(k) => node.labels.get(k).cloned(),
        };
        let same = actual.as_deref() == Some(self.value.as_str())
            || (self.field == Field::Arch
                && arch_name(&self.value) == actual.as_deref().unwrap_or(""));
        same == self.equal
    }

    /// The constraint as Swarm reads it.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

fn field_name(f: &Field) -> String {
    match f {
        Field::Id => "node.id".into(),
        Field::Hostname => "node.hostname".into(),
        Field::Role => "node.role".into(),
        Field::Arch => "node.platform.arch".into(),
        Field::Label(k) => format!("node.labels.{k}"),
    }
}

/// The engines' and Go's names of one architecture, as one.
fn arch_name(a: &str) -> &str {
    match a {
        "amd64" => "x86_64",
        "arm64" => "aarch64",
        other => other,
    }
}

/// Parses every constraint of `texts`.
pub fn parse_all(texts: &[String]) -> Result<Vec<Constraint>, ConstraintError> {
    texts.iter().map(|t| Constraint::parse(t)).collect()
}

/// Whether `node` meets every constraint.
pub fn meets(node: &SwarmNode, constraints: &[Constraint]) -> bool {
    constraints.iter().all(|c| c.holds(node))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn node(id: &str, manager: bool, profile: Option<&str>) -> SwarmNode {
        let mut labels = BTreeMap::new();
        if let Some(p) = profile {
            labels.insert("etip.profile".to_string(), p.to_string());
        }
        SwarmNode {
            id: id.into(),
            hostname: "vm".into(),
            usable: true,
            state: "ready".into(),
            manager,
            labels,
            engine_version: "20.10".into(),
            architecture: "x86_64".into(),
            addr: String::new(),
        }
    }

    #[test]
    fn constraints_are_read_as_swarm_reads_them() {
        let worker = node("w1", false, Some("small"));
        let manager = node("m", true, None);
        let role = Constraint::parse("node.role==worker").unwrap();
        assert!(role.holds(&worker) && !role.holds(&manager));
        let profile = Constraint::parse("node.labels.etip.profile == small").unwrap();
        assert_eq!(profile.as_str(), "node.labels.etip.profile==small");
        assert!(profile.holds(&worker) && !profile.holds(&manager));
        let not_w1 = Constraint::parse("node.id!=w1").unwrap();
        assert!(!not_w1.holds(&worker) && not_w1.holds(&manager));
        // A missing label is not equal to anything.
        let other = Constraint::parse("node.labels.etip.profile!=large").unwrap();
        assert!(other.holds(&worker) && other.holds(&manager));
        // Go's and the kernel's architecture names are one.
        let arch = Constraint::parse("node.platform.arch==amd64").unwrap();
        assert!(arch.holds(&worker));
        assert!(meets(&worker, &[role, profile]));
    }

    #[test]
    fn a_constraint_etip_cannot_evaluate_is_refused() {
        for bad in [
            "engine.labels.x==1",
            "node.labels.==1",
            "node.role",
            "node.role==",
            "node.ip==1",
        ] {
            assert_eq!(
                Constraint::parse(bad),
                Err(ConstraintError(bad.into())),
                "{bad}"
            );
        }
    }
}
