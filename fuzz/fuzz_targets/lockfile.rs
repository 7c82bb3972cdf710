//! skills.lock: parse any text; whatever parses must write back to text
//! that parses to the same lock (the writer is deterministic).
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillpm::project::lockfile::Lockfile;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("skills.lock");
    if let Ok(lock) = Lockfile::parse(s, path) {
        let text = lock.to_toml_string();
        let again = Lockfile::parse(&text, path)
            .unwrap_or_else(|e| panic!("written lock does not parse: {e}\n{text}"));
        assert_eq!(again.to_toml_string(), text, "lock write is not stable");
    }
});
