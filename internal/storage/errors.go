package storage

import "github.com/anvilmetal/anvil/internal/fielderr"

// FieldErrors are validation errors in MAAS's form shape: field → messages;
// "__all__" holds the ones that belong to no single field (see fielderr).
type FieldErrors = fielderr.Errors
