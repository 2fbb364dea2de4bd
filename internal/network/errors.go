package network

import "github.com/anvilmetal/anvil/internal/fielderr"

// FieldErrors maps a field to what is wrong with it, in words, the shape
// of MAAS's 400 answers (see fielderr).
type FieldErrors = fielderr.Errors
