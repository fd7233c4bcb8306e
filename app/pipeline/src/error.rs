//! Which failures are the user's input and which are failed runs.

/// A failure the user caused with bad input (a malformed file, a flag that does not fit, an output
/// that would overwrite an input): the binary reports it with exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// Wraps a scoring error: input errors become [`InputError`] (exit code 2), others stay as they
/// are.
pub fn input_error(err: etip_score::ScoreError) -> anyhow::Error {
    if err.is_input_error() {
        InputError(err.to_string()).into()
    } else {
        err.into()
    }
}

/// True when `err` or one of its causes is an [`InputError`].
pub fn is_input_error(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<InputError>())
}
