//! `acp agents`: the agents of the config file, and importing Zed's.

pub mod zed;
