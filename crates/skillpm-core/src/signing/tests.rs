use super::*;

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn public(k: &SigningKey) -> PublicKey {
    let v = k.verifying_key();
    PublicKey {
        id: key_id(&v),
        algorithm: ALGORITHM.into(),
        key: encode_key(&v),
        valid_from: None,
        revoked: None,
    }
}

fn dep(name: &str, req: &str) -> IndexDep {
    IndexDep {
        name: SkillName::new(name).unwrap(),
        req: semver::VersionReq::parse(req).unwrap(),
    }
}

fn entry(deps: Vec<IndexDep>) -> IndexVersion {
    IndexVersion {
        name: SkillName::new("code-review").unwrap(),
        vers: semver::Version::parse("1.2.0-rc.1+build.5").unwrap(),
        cksum: Checksum::of_bytes(b"tarball"),
        yanked: false,
        description: "Reviews code".into(),
        requires: Default::default(),
        deps,
        published: None,
        sig: None,
        audit: None,
    }
}

fn signed(k: &SigningKey, mut v: IndexVersion) -> IndexVersion {
    v.sig = Some(sign(k, &v.name, &v.vers, &v.cksum, &v.deps));
    v
}

#[test]
fn the_message_is_canonical_and_names_every_signed_field() {
    let v = entry(vec![dep("style-guide", "^2"), dep("lint", ">=1.0, <3")]);
    let text = String::from_utf8(message_of(&v)).unwrap();
    assert_eq!(
        text,
        format!(
            "skillpm-index-v1\ncode-review\n1.2.0-rc.1+build.5\n{}\nlint >=1.0, <3\nstyle-guide ^2\n",
            v.cksum
        )
    );
    // The order the index lists dependencies in does not matter.
    let mut swapped = v.clone();
    swapped.deps.reverse();
    assert_eq!(message_of(&swapped), message_of(&v));
    // What is not signed does not change the message.
    let mut other = v.clone();
    other.yanked = true;
    other.description = "something else".into();
    other.published = Some("2026-01-01T00:00:00Z".into());
    assert_eq!(message_of(&other), message_of(&v));
    // A requirement read back from JSON (as the client reads the index)
    // gives the same line as the server's.
    let json = serde_json::to_string(&v.deps).unwrap();
    let back: Vec<IndexDep> = serde_json::from_str(&json).unwrap();
    assert_eq!(message(&v.name, &v.vers, &v.cksum, &back), message_of(&v));
}

#[test]
fn a_signed_entry_verifies_and_any_change_to_a_signed_field_does_not() {
    let k = key(1);
    let ring = Keyring::new(&[public(&k)]).unwrap();
    assert!(ring.signs());
    let good = signed(&k, entry(vec![dep("lint", "^1")]));
    assert_eq!(
        ring.verify(&good).unwrap(),
        Some(key_id(&k.verifying_key()).as_str())
    );
    // Unsigned: no error here (the lock decides whether that is allowed).
    assert_eq!(ring.verify(&entry(vec![])).unwrap(), None);

    let mut tampered = Vec::new();
    let mut t = good.clone();
    t.cksum = Checksum::of_bytes(b"other");
    tampered.push(t);
    let mut t = good.clone();
    t.vers = semver::Version::parse("1.2.1").unwrap();
    tampered.push(t);
    let mut t = good.clone();
    t.deps.push(dep("evil", "*"));
    tampered.push(t);
    let mut t = good.clone();
    t.deps[0].req = semver::VersionReq::parse("^2").unwrap();
    tampered.push(t);
    let mut t = good.clone();
    t.name = SkillName::new("code-reviews").unwrap();
    tampered.push(t);
    for t in tampered {
        let e = ring.verify(&t).unwrap_err();
        assert!(matches!(e, SignatureError::Invalid { .. }), "{e}");
        assert!(e.to_string().contains(&key_id(&k.verifying_key())), "{e}");
    }
    // Signed by a key the registry does not list.
    let stranger = signed(&key(2), entry(vec![]));
    let e = ring.verify(&stranger).unwrap_err();
    assert!(matches!(e, SignatureError::UnknownKey { .. }), "{e}");
    assert!(
        e.to_string().starts_with("code-review@1.2.0-rc.1+build.5 "),
        "{e}"
    );
}

#[test]
fn revoked_and_unsupported_keys_verify_nothing() {
    let (a, b) = (key(1), key(2));
    let mut revoked = public(&a);
    revoked.revoked = Some("2026-11-01T00:00:00Z".into());
    let other = PublicKey {
        id: "pq0001".into(),
        algorithm: "ml-dsa-65".into(),
        key: "AAAA".into(),
        valid_from: None,
        revoked: None,
    };
    let ring = Keyring::new(&[revoked, public(&b), other]).unwrap();
    let e = ring.verify(&signed(&a, entry(vec![]))).unwrap_err();
    assert!(matches!(e, SignatureError::Revoked { .. }), "{e}");
    assert!(ring.verify(&signed(&b, entry(vec![]))).is_ok());
    let mut v = entry(vec![]);
    v.sig = Some(Signature {
        keyid: "pq0001".into(),
        sig: "AAAA".into(),
    });
    let e = ring.verify(&v).unwrap_err();
    assert!(matches!(e, SignatureError::Unsupported { .. }), "{e}");
    // Only revoked keys: the registry no longer signs.
    let mut only = public(&a);
    only.revoked = Some("x".into());
    assert!(!Keyring::new(&[only]).unwrap().signs());
    assert!(!Keyring::default().signs());
}

#[test]
fn malformed_signatures_are_errors_not_panics() {
    let k = key(1);
    let ring = Keyring::new(&[public(&k)]).unwrap();
    let id = key_id(&k.verifying_key());
    for bad in [
        "",
        "not base64!",
        "AAAA",
        &"A".repeat(10_000),
        &STANDARD.encode([0u8; 63]),
        &STANDARD.encode([0u8; 65]),
        &STANDARD.encode([0xffu8; 64]),
    ] {
        let mut v = entry(vec![]);
        v.sig = Some(Signature {
            keyid: id.clone(),
            sig: bad.to_string(),
        });
        let e = ring.verify(&v).unwrap_err();
        assert!(
            matches!(
                e,
                SignatureError::Malformed { .. } | SignatureError::Invalid { .. }
            ),
            "{e}"
        );
        assert!(e.to_string().len() < 300, "{e}");
    }
    // A hostile key id is shown quoted and cut, never whole.
    let mut v = entry(vec![]);
    v.sig = Some(Signature {
        keyid: format!("\u{1b}[31m{}", "x".repeat(10_000)),
        sig: String::new(),
    });
    let e = ring.verify(&v).unwrap_err().to_string();
    assert!(e.len() < 300 && !e.contains('\u{1b}'), "{e}");
}

#[test]
fn key_lists_are_checked_before_use() {
    let k = key(1);
    let good = public(&k);
    let too_many: Vec<PublicKey> = (0..=MAX_KEYS as u8).map(|i| public(&key(i))).collect();
    assert!(matches!(Keyring::new(&too_many), Err(KeyError::TooMany(_))));
    assert!(matches!(
        Keyring::new(&[good.clone(), good.clone()]),
        Err(KeyError::Duplicate(_))
    ));
    let with = |f: &dyn Fn(&mut PublicKey)| {
        let mut p = good.clone();
        f(&mut p);
        Keyring::new(&[p]).unwrap_err()
    };
    assert!(matches!(
        with(&|p| p.id = "UPPER".into()),
        KeyError::BadId { .. }
    ));
    assert!(matches!(
        with(&|p| p.id = String::new()),
        KeyError::BadId { .. }
    ));
    assert!(matches!(
        with(&|p| p.id = "a".repeat(65)),
        KeyError::BadId { .. }
    ));
    assert!(matches!(
        with(&|p| p.key = "%%%".into()),
        KeyError::BadKey { .. }
    ));
    assert!(matches!(
        with(&|p| p.key = STANDARD.encode([1u8; 31])),
        KeyError::BadKey { .. }
    ));
    assert!(matches!(
        with(&|p| p.key = "A".repeat(100_000)),
        KeyError::BadKey { .. }
    ));
    // The identity point: a weak key anyone can forge for.
    let mut identity = [0u8; 32];
    identity[0] = 1;
    assert!(matches!(
        with(&|p| p.key = STANDARD.encode(identity)),
        KeyError::BadKey { .. } | KeyError::IdMismatch { .. }
    ));
    // Another key under this key's id.
    let e = with(&|p| p.key = encode_key(&key(2).verifying_key()));
    assert!(matches!(e, KeyError::IdMismatch { .. }), "{e}");
}
