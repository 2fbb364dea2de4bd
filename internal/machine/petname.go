package machine

import (
	"crypto/rand"
	"fmt"
	"math/big"
)

// Petname makes a readable hostname for machines added or enlisted without
// one, as MAAS does; a clash is unlikely and the store refuses it anyway.
func Petname() string {
	adjectives := []string{"amber", "brave", "calm", "deft", "eager", "fair", "glad", "hardy", "keen", "lucid",
		"merry", "noble", "polar", "quick", "rapid", "solid", "tidy", "vivid", "witty", "young"}
	nouns := []string{"anvil", "badger", "cedar", "dingo", "ember", "falcon", "gecko", "heron", "ibex", "jackal",
		"koala", "lynx", "marten", "newt", "otter", "puffin", "quail", "raven", "stoat", "tapir"}
	pick := func(l []string) string {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(l))))
		return l[n.Int64()]
	}
	n, _ := rand.Int(rand.Reader, big.NewInt(10000))
	return fmt.Sprintf("%s-%s-%04d", pick(adjectives), pick(nouns), n.Int64())
}
