//! API answers by URL: what a run read from GitHub is not asked again (nor counted against the
//! rate limit) by a re-run.

use rusqlite::{OptionalExtension, params};

use crate::{Store, StoreError, q};

impl Store {
    /// The stored answer (status, body) for `url`, if any.
    pub fn http_answer(&self, url: &str) -> Result<Option<(u16, String)>, StoreError> {
        self.conn
            .query_row(
                "SELECT status, body FROM http_cache WHERE url = ?1",
                params![url],
                |r| Ok((r.get::<_, i64>(0)?.clamp(0, 999) as u16, r.get(1)?)),
            )
            .optional()
            .map_err(q("read an HTTP answer"))
    }

    /// Stores (or replaces) the answer for `url`.
    pub fn record_http_answer(&self, url: &str, status: u16, body: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO http_cache (url, status, body) VALUES (?1, ?2, ?3)",
                params![url, i64::from(status), body],
            )
            .map(|_| ())
            .map_err(q("record an HTTP answer"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_by_url() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("s.sqlite")).unwrap();
        assert_eq!(store.http_answer("/a").unwrap(), None);
        store.record_http_answer("/a", 404, "").unwrap();
        store.record_http_answer("/b", 200, "{}").unwrap();
        assert_eq!(store.http_answer("/a").unwrap(), Some((404, String::new())));
        assert_eq!(store.http_answer("/b").unwrap(), Some((200, "{}".into())));
    }
}
