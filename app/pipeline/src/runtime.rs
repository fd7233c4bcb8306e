//! The one tokio runtime of the process, made on first use; libraries borrow its handle.
//!
//! The program that uses the pipeline may register one [`on_start`] hook, run once when the
//! runtime is made (the `etip` binary watches for signals there, so that only commands that talk
//! to Docker install its cleanup).

use std::sync::OnceLock;
use tokio::runtime::Runtime;

static RT: OnceLock<Runtime> = OnceLock::new();
static HOOK: OnceLock<fn(&Runtime)> = OnceLock::new();

/// Registers the function run once when the runtime is made (a second registration is ignored).
pub fn on_start(hook: fn(&Runtime)) {
    let _ = HOOK.set(hook);
}

/// The runtime, made on first use (two worker threads: the engine's requests are few and long).
pub fn get() -> anyhow::Result<&'static Runtime> {
    if let Some(rt) = RT.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("starting the async runtime: {e}"))?;
    let mut made = false;
    let rt = RT.get_or_init(|| {
        made = true;
        rt
    });
    if made && let Some(hook) = HOOK.get() {
        hook(rt);
    }
    Ok(rt)
}
