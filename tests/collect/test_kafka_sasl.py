"""SASL conversations of kafkadiag's own Kafka client, against the published test vectors."""

from __future__ import annotations

import pytest

from kafkadiag.collect.kafka_sasl import SaslError, conversation

# RFC 7677, section 3: SCRAM-SHA-256 for user "user", password "pencil".
CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
CLIENT_FINAL = b"".join(
    [
        b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,",
        b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
    ]
)
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def test_scram_sha_256_matches_rfc_7677() -> None:
    talk = conversation("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    assert next(talk) == b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
    assert talk.send(SERVER_FIRST) == CLIENT_FINAL
    with pytest.raises(StopIteration):
        talk.send(SERVER_FINAL)


def test_scram_refuses_a_broker_that_does_not_know_the_password() -> None:
    talk = conversation("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    next(talk)
    talk.send(SERVER_FIRST)
    with pytest.raises(SaslError, match="signature does not match"):
        talk.send(b"v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")


def test_scram_refuses_a_nonce_it_did_not_start_and_reports_server_errors() -> None:
    talk = conversation("SCRAM-SHA-512", "user", "pencil", nonce="abc")
    next(talk)
    with pytest.raises(SaslError, match="malformed"):
        talk.send(b"r=xyz,s=AAAA,i=4096")
    talk = conversation("SCRAM-SHA-512", "user", "pencil", nonce="abc")
    next(talk)
    with pytest.raises(SaslError, match="unknown-user"):
        talk.send(b"e=unknown-user")


def test_scram_escapes_user_names() -> None:
    assert next(conversation("SCRAM-SHA-512", "a=b,c", "p", nonce="n")) == b"n,,n=a=3Db=2Cc,r=n"


def test_plain_sends_one_message() -> None:
    talk = conversation("PLAIN", "alice", "s3cret")
    assert next(talk) == b"\0alice\0s3cret"
    with pytest.raises(StopIteration):
        talk.send(b"")


def test_mechanisms_it_does_not_speak_are_refused() -> None:
    with pytest.raises(SaslError, match="GSSAPI"):
        conversation("GSSAPI", "u", "p")
