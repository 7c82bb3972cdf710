//! SKILL.md parsing: any bytes must give Ok or a one-line error, never a
//! panic, a hang or unbounded memory (alias bombs, deep nesting).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match skillpm::skill::parse(data) {
        Ok(doc) => {
            let _ = (doc.name(), doc.description(), doc.version());
        }
        Err(e) => {
            let _ = (e.code(), e.detail(), e.line());
        }
    }
});
