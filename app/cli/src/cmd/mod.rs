//! One module per subcommand; each exposes `Args` (clap derive) and `run(args) -> anyhow::Result<()>`.

pub mod base_image;
pub mod build;
pub mod classify;
pub mod clean;
pub mod config;
pub mod demo;
pub mod demo_report;
pub mod disk;
pub mod eval;
pub mod eval_html;
pub mod eval_labels;
pub mod input;
pub mod measure;
pub mod measure_html;
pub mod mine;
pub mod mine_args;
pub mod mine_github;
pub mod output;
pub mod progress;
pub mod select;

use std::process::ExitCode;

pub mod audit;
pub mod format;
pub mod score;

/// The one tokio runtime of the process, made on first use; libraries borrow its handle.
pub fn runtime() -> anyhow::Result<&'static tokio::runtime::Runtime> {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    if let Some(rt) = RT.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("starting the async runtime: {e}"))?;
    let rt = RT.get_or_init(|| rt);
    // Commands that talk to Docker create the runtime: from here on a signal removes the
    // containers this run started before the process ends.
    rt.spawn(stop_on_signal());
    Ok(rt)
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

/// Errors that a user caused (bad input): reported with exit code 2.
pub use etip_pipeline::InputError as UsageError;

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
            eprintln!("error: {err:#}");
            if etip_pipeline::error::is_input_error(&err) {
                ExitCode::from(2)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}
