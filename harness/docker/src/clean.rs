//! Finding and removing what etip created: listing labelled images and containers, removing
//! containers, and [`Engine::clean`].

use crate::interrupt::{Object, REMOVAL_WAIT, status};
use crate::{Engine, EngineError, LABEL_KIND, LABEL_MANAGED, LABEL_NAMESPACE};
use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListImagesOptionsBuilder, RemoveContainerOptionsBuilder,
};
use std::collections::HashMap;
use std::time::Duration;

/// One labelled object found by [`Engine::list_images`] / [`Engine::list_containers`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labelled {
    pub id: String,
    /// Tags (images) or names (containers).
    pub names: Vec<String>,
    pub labels: HashMap<String, String>,
}

/// What [`Engine::clean`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanReport {
    pub containers: Vec<String>,
    pub images: Vec<String>,
}

/// Which labelled objects [`Engine::clean`] removes.
#[derive(Debug, Clone, Default)]
pub struct CleanFilter {
    /// Only objects of this namespace (all namespaces when `None`).
    pub namespace: Option<String>,
    /// Image kinds to keep (e.g. `base`).
    pub keep_kinds: Vec<String>,
    /// Remove containers only (e.g. the sessions a killed run left), keep every image.
    pub containers_only: bool,
}

impl Engine {
    /// Removes a container (forced: killed when running) and returns once it is gone. Missing
    /// containers are not an error; a removal already in progress (another request, e.g. a
    /// signal's cleanup) is waited out, as is any other conflict the engine reports, for up to
    /// a minute.
    pub async fn remove_container(&self, id: &str) -> Result<(), EngineError> {
        let _registration = crate::interrupt::begin_removal();
        let options = RemoveContainerOptionsBuilder::new()
            .force(true)
            .v(true)
            .build();
        let give_up = tokio::time::Instant::now() + REMOVAL_WAIT;
        let mut conflicted = false;
        loop {
            match self
                .docker
                .remove_container(id, Some(options.clone()))
                .await
            {
                Ok(()) => {
                    crate::interrupt::gone(Object::Container, id, true);
                    return Ok(());
                }
                Err(e) if status(&e) == Some(404) => {
                    // After a conflict: the removal in progress finished.
                    crate::interrupt::gone(Object::Container, id, conflicted);
                    return Ok(());
                }
                Err(e) if status(&e) == Some(409) => {
                    if tokio::time::Instant::now() >= give_up {
                        return Err(EngineError::api("removing container", id, e));
                    }
                    tracing::debug!(container = %id, "waiting for the container's removal: {e}");
                    conflicted = true;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => return Err(EngineError::api("removing container", id, e)),
            }
        }
    }

    /// Images carrying all the given `key=value` labels (or just `key` when the value is empty).
    pub async fn list_images(&self, labels: &[String]) -> Result<Vec<Labelled>, EngineError> {
        let filters = HashMap::from([("label".to_string(), labels.to_vec())]);
        let options = ListImagesOptionsBuilder::new().filters(&filters).build();
        let images = self
            .docker
            .list_images(Some(options))
            .await
            .map_err(|e| EngineError::api("listing images", labels.join(","), e))?;
        Ok(images
            .into_iter()
            .map(|i| Labelled {
                id: i.id,
                names: i.repo_tags,
                labels: i.labels,
            })
            .collect())
    }

    /// Containers (running or not) carrying all the given labels.
    pub async fn list_containers(&self, labels: &[String]) -> Result<Vec<Labelled>, EngineError> {
        let filters = HashMap::from([("label".to_string(), labels.to_vec())]);
        let options = ListContainersOptionsBuilder::new()
            .all(true)
            .filters(&filters)
            .build();
        let containers = self
            .docker
            .list_containers(Some(options))
            .await
            .map_err(|e| EngineError::api("listing containers", labels.join(","), e))?;
        Ok(containers
            .into_iter()
            .map(|c| Labelled {
                id: c.id.unwrap_or_default(),
                names: c.names.unwrap_or_default(),
                labels: c.labels.unwrap_or_default(),
            })
            .collect())
    }

    /// Removes etip's labelled containers, then its labelled images (children before parents), as
    /// selected by `filter`.
    pub async fn clean(&self, filter: &CleanFilter) -> Result<CleanReport, EngineError> {
        let mut labels = vec![format!("{LABEL_MANAGED}=true")];
        if let Some(ns) = &filter.namespace {
            labels.push(format!("{LABEL_NAMESPACE}={ns}"));
        }
        let mut report = CleanReport::default();
        for c in self.list_containers(&labels).await? {
            self.remove_container(&c.id).await?;
            report.containers.push(c.id);
        }
        if filter.containers_only {
            return Ok(report);
        }
        let keep = |l: &Labelled| {
            l.labels
                .get(LABEL_KIND)
                .is_some_and(|k| filter.keep_kinds.iter().any(|x| x == k))
        };
        // Instances are built on envs, envs on bases: remove in that order so no image is still
        // a parent of another when it is removed.
        let order = |l: &Labelled| match l.labels.get(LABEL_KIND).map(String::as_str) {
            Some("instance") | Some("run") => 0,
            Some("env") => 1,
            Some("base") => 3,
            _ => 2,
        };
        let mut images: Vec<Labelled> = self
            .list_images(&labels)
            .await?
            .into_iter()
            .filter(|l| !keep(l))
            .collect();
        images.sort_by_key(order);
        for img in images {
            if img.names.is_empty() || img.names.iter().all(|n| n == "<none>:<none>") {
                self.remove_image(&img.id).await?;
            } else {
                for name in &img.names {
                    self.remove_image(name).await?;
                }
            }
            report
                .images
                .push(img.names.first().cloned().unwrap_or(img.id));
        }
        Ok(report)
    }
}
