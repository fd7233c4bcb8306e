//! Common prefixes and suffixes of byte strings: where two versions of a file start and stop
//! differing (the semantic rule's windows and the miner's line diff both trim them first).

/// Length of the common prefix of `a` and `b` (compared 64 bytes at a time, then byte by byte).
pub fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut p = 0;
    while p + 64 <= n && a[p..p + 64] == b[p..p + 64] {
        p += 64;
    }
    while p < n && a[p] == b[p] {
        p += 1;
    }
    p
}

/// Length of the common suffix of `a` and `b`, at most `limit` (which must not exceed either
/// length).
pub fn common_suffix(a: &[u8], b: &[u8], limit: usize) -> usize {
    let (la, lb) = (a.len(), b.len());
    let mut s = 0;
    while s + 64 <= limit && a[la - s - 64..la - s] == b[lb - s - 64..lb - s] {
        s += 64;
    }
    while s < limit && a[la - s - 1] == b[lb - s - 1] {
        s += 1;
    }
    s
}

/// Lengths of the common prefix and of the common suffix not overlapping it.
pub fn common_ends(a: &[u8], b: &[u8]) -> (usize, usize) {
    let p = common_prefix(a, b);
    (p, common_suffix(a, b, a.len().min(b.len()) - p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_do_not_overlap_and_match_a_byte_by_byte_reference() {
        let reference = |a: &[u8], b: &[u8]| {
            let n = a.len().min(b.len());
            let p = (0..n).take_while(|&i| a[i] == b[i]).count();
            let s = (0..n - p)
                .take_while(|&i| a[a.len() - 1 - i] == b[b.len() - 1 - i])
                .count();
            (p, s)
        };
        let long: Vec<u8> = (0..300u32).map(|i| (i % 251) as u8).collect();
        let mut cases: Vec<(Vec<u8>, Vec<u8>)> = vec![
            (b"".to_vec(), b"".to_vec()),
            (b"aaa".to_vec(), b"aaaa".to_vec()),
            (b"abcXdef".to_vec(), b"abcYYdef".to_vec()),
            (long.clone(), long.clone()),
        ];
        for cut in [0, 1, 63, 64, 65, 130, 299] {
            let mut edited = long.clone();
            edited.insert(cut, b'!');
            cases.push((long.clone(), edited.clone()));
            edited.remove(cut);
            edited[cut] ^= 1;
            cases.push((long.clone(), edited));
        }
        for (a, b) in &cases {
            assert_eq!(common_ends(a, b), reference(a, b), "{a:?} / {b:?}");
            assert_eq!(common_ends(b, a), reference(b, a));
        }
    }
}
