//! Quoting input in error messages. An error that echoes what it read (a column name, an instance
//! id, a number that does not parse, a parser's own message) quotes at most [`QUOTE_CHARS`]
//! characters of it, followed by `…`: a 50 MB CSV header gives a one-line error, not 50 MB of
//! stderr. Every etip message that quotes input goes through [`quote`], [`clip`] or [`foreign`].

use std::borrow::Cow;

/// Characters of one piece of input an error message quotes at most.
pub const QUOTE_CHARS: usize = 80;

/// Characters of a parser's message (serde_json, csv, toml) kept at most, after its quoted pieces
/// were cut to [`QUOTE_CHARS`].
pub const FOREIGN_CHARS: usize = 400;

/// `s` cut to at most `max` characters, with `…` appended when it was cut.
///
/// ```
/// use etip_core::clip::clip;
/// assert_eq!(clip("abcdef", 3), "abc…");
/// assert_eq!(clip("abc", 3), "abc");
/// ```
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((end, _)) => Cow::Owned(format!("{}…", &s[..end])),
    }
}

/// `s` quoted and escaped as `{:?}` does, cut to [`QUOTE_CHARS`] characters (`…` after the closing
/// quote when it was cut).
///
/// ```
/// use etip_core::clip::quote;
/// assert_eq!(quote("id-1"), "\"id-1\"");
/// assert!(quote(&"x".repeat(1000)).ends_with("xx\"…"));
/// ```
pub fn quote(s: &str) -> String {
    match s.char_indices().nth(QUOTE_CHARS) {
        None => format!("{s:?}"),
        Some((end, _)) => format!("{:?}…", &s[..end]),
    }
}

/// A parser's message, which may quote the input between backticks (serde's "unknown field
/// `name`") or in full: each backtick-quoted piece is cut to [`QUOTE_CHARS`] characters and the
/// whole to [`FOREIGN_CHARS`].
pub fn foreign(msg: impl std::fmt::Display) -> String {
    let msg = msg.to_string();
    let mut out = String::with_capacity(msg.len().min(FOREIGN_CHARS + 8));
    for (i, piece) in msg.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(&clip(piece, QUOTE_CHARS));
        } else {
            out.push_str(piece);
        }
    }
    clip(&out, FOREIGN_CHARS).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_characters_not_bytes() {
        let s = "é".repeat(100);
        let q = quote(&s);
        assert_eq!(q.chars().filter(|&c| c == 'é').count(), QUOTE_CHARS);
        assert!(q.ends_with("\"…"));
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("a", 0), "…");
    }

    #[test]
    fn foreign_messages_keep_their_shape() {
        let long = "k".repeat(10_000);
        let msg = foreign(format!(
            "unknown field `{long}`, expected one of `a`, `b` at line 1 column 10012"
        ));
        assert!(msg.starts_with("unknown field `kkk"), "{msg}");
        assert!(
            msg.contains("…`, expected one of `a`, `b` at line 1"),
            "{msg}"
        );
        assert!(msg.chars().count() < FOREIGN_CHARS, "{msg}");
        let plain = format!("invalid type: string {long:?}");
        assert!(foreign(plain).chars().count() <= FOREIGN_CHARS + 1);
        assert_eq!(foreign("short `x`"), "short `x`");
    }
}
