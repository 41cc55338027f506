//! Unit tests of the model controller: the filters, the mode cycle on a synthetic path, the
//! loss rules, and an operation-model property test (style habit 5).
