//! Index answers equal scan answers.
