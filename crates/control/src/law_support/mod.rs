//! What several laws share: the model terms, gain declarations, parameter adaptation and the tip target.

pub(crate) mod adaptation;
pub(crate) mod gains;
pub(crate) mod model_terms;
pub(crate) mod tip_target;
