//! A server on 127.0.0.1 that answers OpenAI's `POST /v1/chat/completions` as the test tells
//! it: the classifier's and the hack judge's tests talk to it as the product talks to a real
//! endpoint. Each request's JSON body and authorization header are recorded.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};

/// One request a server saw.
#[derive(Debug, Clone)]
pub struct Request {
    /// The `Authorization` header's value, if one was sent.
    pub authorization: Option<String>,
    /// The JSON body (`null` if it was no JSON).
    pub body: serde_json::Value,
}

/// The requests a server saw, in order.
pub type Seen = Arc<Mutex<Vec<Request>>>;

/// What the server sends back to one request.
pub enum Reply {
    /// A chat completion whose message is this text (100 prompt and 10 completion tokens).
    Content(String),
    /// Any status and JSON body (a rate limit: `429` and an error object).
    Raw(u16, String),
}

/// Starts the server; `respond(body, n)` answers the `n`-th request (0-based). Returns the base
/// URL up to `/v1` and the recorded requests.
pub fn chat_server(
    respond: impl Fn(&serde_json::Value, usize) -> Reply + Send + 'static,
) -> (String, Seen) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port on 127.0.0.1");
    let url = format!(
        "http://{}/v1",
        listener.local_addr().expect("the listener's address")
    );
    let seen: Seen = Arc::default();
    let log = seen.clone();
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            let Ok(clone) = stream.try_clone() else {
                continue;
            };
            let mut reader = BufReader::new(clone);
            let (mut len, mut authorization) = (0usize, None);
            let mut line = String::new();
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                if name.eq_ignore_ascii_case("content-length") {
                    len = value.trim().parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("authorization") {
                    authorization = Some(value.trim().to_string());
                }
            }
            let mut body = vec![0; len];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            let body: serde_json::Value =
                serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
            let reply = respond(&body, n);
            if let Ok(mut l) = log.lock() {
                l.push(Request {
                    authorization,
                    body,
                });
            }
            let (status, payload) = match reply {
                Reply::Content(text) => (
                    200,
                    serde_json::json!({
                        "id": "c", "object": "chat.completion", "created": 0, "model": "test-model",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": text}}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
                    })
                    .to_string(),
                ),
                Reply::Raw(status, payload) => (status, payload),
            };
            let reason = if status == 200 { "OK" } else { "Error" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{payload}",
                payload.len()
            );
        }
    });
    (url, seen)
}
