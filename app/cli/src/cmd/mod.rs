//! One module per subcommand; each exposes `Args` (clap derive) and `run(args) -> anyhow::Result<()>`.

pub mod args;
pub mod base_image;
pub mod build;
pub mod classify;
pub mod clean;
pub mod config;
pub mod demo;
pub mod eval;
pub mod executor;
pub mod export;
pub mod hack_check;
pub mod import;
pub mod measure;
pub mod mine;
pub mod mine_args;
pub mod mine_github;
pub mod progress;
pub mod sandbox;
pub mod select;
pub mod unit;

use std::process::ExitCode;

pub mod audit;
pub mod format;
pub mod score;

/// The one tokio runtime of the process (the pipeline's), made on first use.
pub fn runtime() -> anyhow::Result<&'static tokio::runtime::Runtime> {
    etip_pipeline::runtime::get()
}

/// Commands that talk to Docker create the runtime: from then on a signal removes the containers
/// this run started before the process ends. Registered once, before any command runs.
pub fn watch_signals() {
    etip_pipeline::runtime::on_start(|rt| {
        rt.spawn(stop_on_signal());
    });
}

/// Waits for SIGINT or SIGTERM, then stops the creation of containers and snapshot images,
/// removes the ones this process created (also those of engine requests in flight at the signal,
/// once they finish) and exits with 128 + the signal's number. What was finished is kept: outputs
/// are written atomically and the stores commit per record, so the command continues where it
/// stopped when run again.
async fn stop_on_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        tracing::warn!("cannot watch for signals: a killed run may leave containers");
        return;
    };
    let code = tokio::select! {
        _ = int.recv() => 130,
        _ = term.recv() => 143,
    };
    etip_docker::interrupt();
    eprintln!(
        "\ninterrupted: removing this run's containers and snapshot images (what finished is kept; run the command again to continue)"
    );
    let pending = etip_docker::in_flight();
    if pending > 0 {
        eprintln!("waiting for {pending} request(s) to the Docker engine to finish first");
    }
    match etip_docker::Engine::connect().await {
        Ok(engine) => {
            // Bounded so that the whole cleanup ends before `finish` stops waiting for it.
            let removal = engine
                .remove_own_objects(std::time::Duration::from_secs(90))
                .await;
            eprintln!(
                "removed {} container(s) and {} snapshot image(s)",
                removal.containers.len(),
                removal.snapshots.len()
            );
            for left in &removal.left {
                eprintln!("not removed: {left}");
            }
            if removal.unfinished > 0 {
                eprintln!(
                    "{} request(s) to the Docker engine did not finish: what they create is not removed",
                    removal.unfinished
                );
            }
            if !removal.complete() {
                eprintln!("`etip clean` removes what is left");
            }
        }
        Err(e) => eprintln!(
            "removing the containers and snapshot images: {e} (`etip clean` removes them)"
        ),
    }
    std::process::exit(code);
}

pub fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("ETIP_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// The error and its causes as `{:#}` shows them (`outer: cause: ...`), leaving out a cause whose
/// text already ends the message (library errors name their source in their own text).
fn chain_text(err: &anyhow::Error) -> String {
    let mut text = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !text.ends_with(&cause) {
            text.push_str(": ");
            text.push_str(&cause);
        }
    }
    text
}

/// Maps a command's result to the process exit code: 0 ok, 2 bad input, 1 anything else.
pub fn finish(result: anyhow::Result<()>) -> ExitCode {
    if etip_docker::interrupted() {
        // A signal arrived: its handler removes this run's containers and ends the process with
        // 128 + the signal's number; what failed here failed because of it.
        std::thread::sleep(std::time::Duration::from_secs(300));
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {}", chain_text(&err));
            if etip_pipeline::error::is_input_error(&err) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::chain_text;

    #[test]
    fn chain_text_names_each_cause_once() {
        let setup = etip_docker::SetupError::HiddenPath { path: "/".into() };
        let err = anyhow::Error::new(etip_docker::EngineError::Session {
            id: "s".into(),
            source: setup.clone().into(),
        })
        .context("starting the session");
        assert_eq!(
            chain_text(&err),
            format!("starting the session: session s: {setup}")
        );
        let plain = anyhow::anyhow!("disk full").context("writing x");
        assert_eq!(chain_text(&plain), "writing x: disk full");
    }
}
