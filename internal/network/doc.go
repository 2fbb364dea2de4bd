// Package network is Anvil's network model, built as MAAS models it:
// fabrics, VLANs, spaces, subnets with their ranges and static routes, and
// a machine's interfaces (physical, bond, bridge, VLAN) with their links to
// subnets. It decides, it does not talk: the rules that keep a model
// workable (Validate and the per-object rules beside it), the address a
// link in AUTO mode is given (NextFree), a subnet's addresses in use and
// free (InUse, Unused), the default gateway per family
// (DefaultGateways) and the deployed machine's cloud-init network-config
// (Render) are pure functions of plain data. The store persists the model
// and the API speaks it; neither is known here.
package network
