//! The live index of a workspace: what lets a content search read only the files that
//! could hold a match.
pub(crate) mod plan;
