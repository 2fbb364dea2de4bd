package machine

// StorageEdit says when a storage edit may be made and holds MAAS's
// words for the refusals, which differ by edit.
type StorageEdit struct {
	// Allocated allows the edit on an Allocated machine too (format,
	// mount and their undoing); every other edit needs Ready.
	Allocated bool
	// Deployed allows the edit on a Deployed machine too (a block
	// device's name, model, serial and id_path, for a replaced disk).
	Deployed bool
	// NotReady is the refusal in any other status (409).
	NotReady string
	// Forbidden is the refusal to someone who may not edit the machine
	// (403): on a Ready machine, anyone but an administrator.
	Forbidden string
}

// Refusal is an error with MAAS's exact words that is also ErrForbidden.
type Refusal struct{ Msg string }

func (e *Refusal) Error() string { return e.Msg }
func (e *Refusal) Unwrap() error { return ErrForbidden }

// CheckStorageEdit decides whether a may make edit e to m's storage, as
// MAAS does: the status first, then the permission; a locked machine is
// refused as every edit of one is.
func CheckStorageEdit(a Actor, m *Machine, what Action, e StorageEdit) error {
	if err := CheckUnlocked(a, m, what); err != nil {
		return err
	}
	if m.Status != Ready && (m.Status != Allocated || !e.Allocated) && (m.Status != Deployed || !e.Deployed) {
		return &Violation{e.NotReady}
	}
	if !CanEdit(a, m) {
		return &Refusal{e.Forbidden}
	}
	return nil
}
