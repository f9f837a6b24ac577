//! Unit tests of the secret guard: every rule with positive and negative samples (pm-cli's own
//! test shapes included), the count and `rules=` summary, and the three modes.
//!
//! Credential-shaped samples are assembled from fragments at run time, so the source holds no
//! literal token for a repository secret scanner to trip on.

use super::*;
use crate::ErrorCode;

fn join(parts: &[&str]) -> String {
    parts.concat()
}

fn rules_in(text: &str) -> Vec<&'static str> {
    scan(&[Leaf::new("--description", text)])
        .iter()
        .map(|f| f.rule.as_str())
        .collect()
}

fn assert_fires(rule: SecretRule, samples: &[String]) {
    for sample in samples {
        assert!(
            rule.matches(sample),
            "{} should fire on {sample:?}",
            rule.as_str()
        );
    }
}

fn assert_silent(rule: SecretRule, samples: &[String]) {
    for sample in samples {
        assert!(
            !rule.matches(sample),
            "{} fired on {sample:?}",
            rule.as_str()
        );
    }
}

#[test]
fn github_token() {
    let body = "123456789012345678901234567890";
    assert_fires(
        SecretRule::GithubToken,
        &[
            join(&["gh", "p_", body]),
            join(&["gh", "o_", &"a".repeat(20)]),
            join(&["gh", "u_", body]),
            join(&["gh", "s_", body]),
            join(&["gh", "r_", body]),
            join(&["github", "_pat_", &"x_Y9".repeat(6)]),
            format!("token {}.", join(&["gh", "p_", body])),
            format!(
                "https://ci:{}@github.com/o/r.git",
                join(&["gh", "p_", body])
            ),
        ],
    );
    assert_silent(
        SecretRule::GithubToken,
        &[
            join(&["gh", "p_", "short"]),
            join(&["gh", "p_", &"a".repeat(19)]),
            join(&["xgh", "p_", body]),
            join(&["gh", "x_", body]),
            // The body must end at a word boundary: a trailing `_` continues the word.
            join(&["gh", "p_", body, "_tail"]),
            join(&["github", "_pat_", "short"]),
        ],
    );
}

#[test]
fn private_key() {
    assert_fires(
        SecretRule::PrivateKey,
        &[
            join(&["-----BEGIN ", "PRIVATE KEY-----"]),
            join(&["-----BEGIN RSA ", "PRIVATE KEY-----\nMIIEv..."]),
            join(&["-----BEGIN OPENSSH ", "PRIVATE KEY-----"]),
            join(&["-----BEGIN PKCS8 ", "PRIVATE KEY-----"]),
            join(&["-----BEGIN ENCRYPTED ", "PRIVATE KEY-----"]),
        ],
    );
    assert_silent(
        SecretRule::PrivateKey,
        &[
            "-----BEGIN PUBLIC KEY-----".into(),
            "-----BEGIN CERTIFICATE-----".into(),
            join(&["-----begin ", "private key-----"]),
            join(&["-----BEGIN EC DSA ", "PRIVATE KEY-----"]),
            "a private key lives in the vault".into(),
        ],
    );
}

#[test]
fn aws_access_key() {
    assert_fires(
        SecretRule::AwsAccessKey,
        &[
            join(&["AK", "IAIOSFODNN7EXAMPLE"]),
            join(&["AK", "IA1234567890ABCDEF"]),
            join(&["AS", "IA", &"A".repeat(16)]),
            join(&["Old key ", "AK", "IAIOSFODNN7EXAMPLE", " leaked"]),
            join(&["key=", "AK", "IAIOSFODNN7EXAMPLE;"]),
        ],
    );
    assert_silent(
        SecretRule::AwsAccessKey,
        &[
            join(&["AK", "IA", &"A".repeat(15)]),
            join(&["AK", "IAIOSFODNN7EXAMPLEX"]),
            join(&["ak", "iaiosfodnn7example"]),
            join(&["XAK", "IAIOSFODNN7EXAMPLE"]),
            join(&["AK", "IAiosfodnn7example"]),
        ],
    );
}

#[test]
fn npm_token() {
    assert_fires(
        SecretRule::NpmToken,
        &[
            join(&["npm", "_", &"A".repeat(36)]),
            join(&["npm", "_", &"a".repeat(24)]),
            join(&[
                "//registry.npmjs.org/:_authToken=",
                "npm",
                "_",
                &"b9".repeat(18),
            ]),
            join(&["NPM_TOKEN=", "npm", "_", &"Z".repeat(20)]),
        ],
    );
    assert_silent(
        SecretRule::NpmToken,
        &[
            join(&["npm", "_", "short"]),
            join(&["npm", "_", &"a".repeat(19)]),
            join(&["xnpm", "_", &"a".repeat(24)]),
            join(&["npm", "_", &"a".repeat(24), "_suffix"]),
            "npm install left-pad".into(),
        ],
    );
}

#[test]
fn slack_token() {
    assert_fires(
        SecretRule::SlackToken,
        &[
            join(&["xo", "xb-", "1234567890-", "1234567890-", &"A".repeat(24)]),
            join(&["xo", "xb-", &"a".repeat(24)]),
            join(&["xo", "xp-", "0123456789"]),
            join(&["xo", "xa-", "2-abcdefghij"]),
        ],
    );
    assert_silent(
        SecretRule::SlackToken,
        &[
            join(&["xo", "xz-", &"a".repeat(24)]),
            join(&["xo", "xb-", "123456789"]),
            join(&["axo", "xb-", &"a".repeat(24)]),
            "xoxo, see you".into(),
        ],
    );
}

#[test]
fn high_entropy_assignment() {
    let generated = "AbCdEfGhIjKlMnOpQrStUvWxYz012345";
    assert_fires(
        SecretRule::HighEntropyAssignment,
        &[
            format!("token={generated}"),
            format!("api_key: \"{generated}\""),
            format!("Api-Key = '{generated}'"),
            format!("APIKEY={generated}"),
            format!("PASSWORD:{generated}"),
            format!("passwd\t=\t{generated}"),
            format!("client secret={generated}"),
            format!("MY-TOKEN={generated}"),
            // 12 distinct characters, evenly spread: log2(12) ≈ 3.58 bits.
            format!("secret={}", "abcdefghijkl".repeat(2)),
            // The first assignment looks typed, the second generated: pm judges every one.
            format!("token={} then token={generated}", "a".repeat(30)),
        ],
    );
    assert_silent(
        SecretRule::HighEntropyAssignment,
        &[
            // Repeated or patterned values are not generated (pm's entropy floor).
            format!("token={}", "a".repeat(40)),
            format!("password={}", "ab".repeat(20)),
            format!("secret={}", "abcdefgh".repeat(3)),
            // Too short.
            format!("token={}", &generated[..23]),
            // The key must start at a word boundary and be followed by `=` or `:`.
            format!("mytoken={generated}"),
            format!("my_token={generated}"),
            format!("tokenizer={generated}"),
            format!("key={generated}"),
            format!("token {generated}"),
            // Placeholders in documentation.
            "export API_KEY=your-api-key-here".into(),
            "password: changeme".into(),
            "token = \"<REDACTED>\"".into(),
        ],
    );
}

#[test]
fn url_credentials() {
    let pw = join(&["hun", "ter2"]);
    assert_fires(
        SecretRule::UrlCredentials,
        &[
            format!("clone https://user:{pw}@host/repo.git"),
            format!("postgres://app:{pw}@db:5432/x"),
            format!("REDIS_URL=redis://:{pw}@cache:6379"),
            format!("HTTPS://USER:{pw}@HOST"),
        ],
    );
    assert_silent(
        SecretRule::UrlCredentials,
        &[
            "https://user@host/repo.git".into(),
            "git@github.com:o/r.git".into(),
            "https://host/a:b@c".into(),
            "https://user:${TOKEN}@host".into(),
            "postgres://app:<password>@db/x".into(),
            "https://user:@host".into(),
            "mailto:a@b.example".into(),
        ],
    );
    // A token in the password position fires both rules.
    let url = join(&[
        "https://x-access-token:",
        "gh",
        "p_",
        &"9".repeat(30),
        "@github.com/o/r",
    ]);
    assert_eq!(rules_in(&url), ["github_token", "url_credentials"]);
}

#[test]
fn ordinary_text_is_not_a_finding() {
    for text in [
        "Fix login redirect after OAuth callback",
        "Rotate credentials for the staging bucket",
        "pm-a1b2 blocks pm-c3d4",
        "See docs/SECURITY.md#tokens",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ] {
        assert!(rules_in(text).is_empty(), "{text}");
    }
}

#[test]
fn one_finding_per_rule_and_path() {
    let aws = join(&["AK", "IAIOSFODNN7EXAMPLE"]);
    let ghp = join(&["gh", "p_", &"1".repeat(30)]);
    let leaves = [
        Leaf::new("TITLE", format!("{aws} and {aws}")),
        Leaf::new("--description", format!("{ghp} {aws}")),
        Leaf::new("--add[0]", "nothing here"),
        Leaf::new("--add[1]", aws.clone()),
    ];
    let findings = scan(&leaves);
    let found: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| (f.rule.as_str(), f.path.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("aws_access_key", "TITLE"),
            ("github_token", "--description"),
            ("aws_access_key", "--description"),
            ("aws_access_key", "--add[1]"),
        ]
    );
    // The same path given twice still counts once per rule.
    let twice = [Leaf::new("X", aws.clone()), Leaf::new("X", aws)];
    assert_eq!(scan(&twice).len(), 1);
}

#[test]
fn advise_counts_findings_and_sorts_rules() -> Result<()> {
    let aws = join(&["AK", "IAIOSFODNN7EXAMPLE"]);
    let ghp = join(&["gh", "p_", &"1".repeat(30)]);
    let golden = [Leaf::new("--description", format!("Old key {aws} leaked"))];
    let verdict = evaluate_secret_guard(SecretGuardMode::Advise, false, &golden)?;
    assert_eq!(
        verdict.warnings,
        ["secret_guard_detected:1:rules=aws_access_key"]
    );
    assert!(!verdict.override_applied);
    // First seen is github_token, but `rules=` is sorted by name; the count is findings.
    let leaves = [
        Leaf::new("--title", ghp.clone()),
        Leaf::new("--description", format!("{aws} {ghp}")),
    ];
    let verdict = evaluate_secret_guard(SecretGuardMode::Advise, false, &leaves)?;
    assert_eq!(
        verdict.warnings,
        ["secret_guard_detected:3:rules=aws_access_key,github_token"]
    );
    // --force changes nothing when the guard only advises.
    let forced = evaluate_secret_guard(SecretGuardMode::Advise, true, &leaves)?;
    assert_eq!(forced.warnings, verdict.warnings);
    assert!(!forced.override_applied);
    Ok(())
}

#[test]
fn block_refuses_without_the_value_and_force_overrides() -> Result<()> {
    let npm = join(&["npm", "_", &"A".repeat(36)]);
    let leaves = [
        Leaf::new("--title", "Credential"),
        Leaf::new("--description", npm.clone()),
        Leaf::new(
            "--add-ac[1]",
            format!("token=AbCdEfGhIjKlMnOpQrStUvWxYz012345 {npm}"),
        ),
    ];
    let Err(error) = evaluate_secret_guard(SecretGuardMode::Block, false, &leaves) else {
        panic!("block mode must refuse");
    };
    assert_eq!(error.code(), ErrorCode::MutationSecretGuardBlocked);
    assert_eq!(error.code().as_str(), "mutation_secret_guard_blocked");
    let message = error.to_string();
    assert_eq!(
        message,
        "Mutation blocked by secret guard (high_entropy_assignment,npm_token) in --description, --add-ac[1]. No detected value was logged."
    );
    let hint = error.hint().unwrap_or_default();
    assert!(hint.contains("--force"), "{hint}");
    for text in [&message, &hint] {
        assert!(!text.contains(&npm) && !text.contains("AbCdEf"), "{text}");
    }
    let forced = evaluate_secret_guard(SecretGuardMode::Block, true, &leaves)?;
    assert_eq!(
        forced.warnings,
        [
            "secret_guard_detected:3:rules=high_entropy_assignment,npm_token",
            "secret_guard_force_override"
        ]
    );
    assert!(forced.override_applied);
    Ok(())
}

#[test]
fn off_scans_nothing_and_clean_text_passes_every_mode() -> Result<()> {
    let aws = [Leaf::new(
        "--description",
        join(&["AK", "IAIOSFODNN7EXAMPLE"]),
    )];
    assert_eq!(
        evaluate_secret_guard(SecretGuardMode::Off, false, &aws)?,
        GuardVerdict::default()
    );
    let clean = [Leaf::new("--title", "Fix the login page")];
    for mode in [SecretGuardMode::Advise, SecretGuardMode::Block] {
        assert_eq!(
            evaluate_secret_guard(mode, false, &clean)?,
            GuardVerdict::default()
        );
    }
    Ok(())
}

#[test]
fn modes_parse_their_settings_values() {
    for mode in [
        SecretGuardMode::Off,
        SecretGuardMode::Advise,
        SecretGuardMode::Block,
    ] {
        assert_eq!(SecretGuardMode::parse(mode.as_str()), Some(mode));
    }
    assert_eq!(SecretGuardMode::parse("warn"), None);
    assert_eq!(SecretGuardMode::default(), SecretGuardMode::Advise);
}

#[test]
fn findings_never_carry_the_value() -> std::result::Result<(), serde_json::Error> {
    let ghp = join(&["gh", "p_", &"7".repeat(30)]);
    let findings = scan(&[Leaf::new("--body", ghp.clone())]);
    let json = serde_json::to_string(&findings)?;
    assert_eq!(json, r#"[{"rule":"github_token","path":"--body"}]"#);
    assert!(!json.contains(&ghp));
    assert!(holds_secret(&ghp));
    assert!(!holds_secret("--body"));
    Ok(())
}

#[test]
fn entropy_is_bits_per_character() {
    assert!(secret::shannon_entropy("aaaa").abs() < f64::EPSILON);
    assert!((secret::shannon_entropy("abcd") - 2.0).abs() < 1e-12);
    assert!((secret::shannon_entropy("abcdefghijkl") - 12f64.log2()).abs() < 1e-12);
    assert!((secret::shannon_entropy("aabb") - 1.0).abs() < 1e-12);
}
