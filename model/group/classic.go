package group

import (
	"cmp"
	"slices"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// A classic group (Kafka's classic.ClassicGroup, ClassicGroupMember and
// ClassicGroupState): its members, its generation, the protocol chosen for
// it, its leader, and the requests parked on it (a JoinGroup until the join
// phase ends, a SyncGroup until the leader's assignment is stored).

// groupState is ClassicGroupState.
type groupState uint8

const (
	stateEmpty groupState = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

func (s groupState) String() string { return stateNames[s] }

// validPrevious is ClassicGroupState's validPreviousStates: the states a
// group may move to s from.
func validPrevious(s groupState) []groupState {
	switch s {
	case statePreparingRebalance:
		return []groupState{stateStable, stateCompletingRebalance, stateEmpty}
	case stateCompletingRebalance:
		return []groupState{statePreparingRebalance}
	case stateStable:
		return []groupState{stateCompletingRebalance}
	case stateEmpty:
		return []groupState{statePreparingRebalance}
	case stateDead:
		return []groupState{stateStable, statePreparingRebalance, stateCompletingRebalance, stateEmpty, stateDead}
	}
	return nil
}

// parked is a request waiting for its answer: who sent it, under which
// correlation id.
type parked struct {
	from        sim.NodeID
	correlation uint64
	// answered: Kafka's response future completes once; a later
	// complete (a failed write's error after a rebalance answered the
	// request) is a no-op.
	answered bool
}

type classicMember struct {
	id, instanceID, clientID string
	rebalanceTimeout         time.Duration
	sessionTimeout           time.Duration
	protocolType             string
	protocols                []proto.JoinGroupProtocol
	assignment               []proto.TopicPartition
	awaitingJoin             *parked
	awaitingSync             *parked
	isNew                    bool
	// joined orders the members (Kafka's are a HashMap; here the order
	// they joined in, which decides the next leader when one leaves).
	joined uint64
}

// metadata is the member's subscription in protocol.
func (m *classicMember) metadata(protocol string) proto.ConsumerSubscription {
	for _, p := range m.protocols {
		if p.Name == protocol {
			return p.Subscription
		}
	}
	return proto.ConsumerSubscription{}
}

// vote is the member's preferred protocol among candidates
// (ClassicGroupMember.vote).
func (m *classicMember) vote(candidates map[string]bool) string {
	for _, p := range m.protocols {
		if candidates[p.Name] {
			return p.Name
		}
	}
	return ""
}

// matches reports whether protocols are the member's own
// (ClassicGroupMember.matches).
func (m *classicMember) matches(protocols []proto.JoinGroupProtocol) bool {
	return slices.EqualFunc(m.protocols, protocols, func(a, b proto.JoinGroupProtocol) bool {
		return a.Name == b.Name && subscriptionEqual(a.Subscription, b.Subscription)
	})
}

func subscriptionEqual(a, b proto.ConsumerSubscription) bool {
	return slices.Equal(a.Topics, b.Topics) && slices.Equal(a.OwnedPartitions, b.OwnedPartitions) && a.Generation == b.Generation && a.RackID == b.RackID
}

type classicGroup struct {
	id                 string
	state, previous    groupState
	generation         int32
	protocolType       string
	protocolName       string
	leader             string
	members            map[string]*classicMember
	staticMembers      map[string]string
	pendingJoin        map[string]bool
	pendingSync        map[string]bool
	numAwaitingJoin    int
	supportedProtocols map[string]int
	newMemberAdded     bool
	nextJoined         uint64
}

func newClassicGroup(id string) *classicGroup {
	return &classicGroup{id: id, members: map[string]*classicMember{}, staticMembers: map[string]string{},
		pendingJoin: map[string]bool{}, pendingSync: map[string]bool{}, supportedProtocols: map[string]int{}}
}

func (g *classicGroup) transitionTo(s groupState) {
	if !slices.Contains(validPrevious(s), g.state) {
		panic("group: " + g.id + ": no transition from " + g.state.String() + " to " + s.String())
	}
	g.previous, g.state = g.state, s
}

// allMembers are the members in the order they joined.
func (g *classicGroup) allMembers() []*classicMember {
	out := make([]*classicMember, 0, len(g.members))
	for _, m := range g.members { // kafkasim:orderless: sorted below
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *classicMember) int { return cmp.Compare(a.joined, b.joined) })
	return out
}

func (g *classicGroup) add(m *classicMember) {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	if g.leader == "" {
		g.leader = m.id
	}
	g.nextJoined++
	m.joined = g.nextJoined
	g.members[m.id] = m
	for _, p := range m.protocols {
		g.supportedProtocols[p.Name]++
	}
	if m.instanceID != "" {
		g.staticMembers[m.instanceID] = m.id
	}
	if m.awaitingJoin != nil {
		g.numAwaitingJoin++
	}
	delete(g.pendingJoin, m.id)
}

// remove is ClassicGroup.remove: the next leader is the earliest joined.
func (g *classicGroup) remove(id string) {
	if m, ok := g.members[id]; ok {
		delete(g.members, id)
		for _, p := range m.protocols {
			g.supportedProtocols[p.Name]--
		}
		if m.awaitingJoin != nil {
			g.numAwaitingJoin--
		}
		if m.instanceID != "" {
			delete(g.staticMembers, m.instanceID)
		}
	}
	if g.leader == id {
		g.leader = ""
		if ms := g.allMembers(); len(ms) > 0 {
			g.leader = ms[0].id
		}
	}
	delete(g.pendingJoin, id)
	delete(g.pendingSync, id)
}

// updateMember is ClassicGroup.updateMember.
func (g *classicGroup) updateMember(m *classicMember, protocols []proto.JoinGroupProtocol, rebalanceTimeout, sessionTimeout time.Duration, join *parked) {
	for _, p := range m.protocols {
		g.supportedProtocols[p.Name]--
	}
	for _, p := range protocols {
		g.supportedProtocols[p.Name]++
	}
	m.protocols, m.rebalanceTimeout, m.sessionTimeout = protocols, rebalanceTimeout, sessionTimeout
	if join != nil && m.awaitingJoin == nil {
		g.numAwaitingJoin++
	} else if join == nil && m.awaitingJoin != nil {
		g.numAwaitingJoin--
	}
	m.awaitingJoin = join
}

// hasAllMembersJoined is ClassicGroup.hasAllMembersJoined.
func (g *classicGroup) hasAllMembersJoined() bool {
	return len(g.members) == g.numAwaitingJoin && len(g.pendingJoin) == 0
}

// rebalanceTimeout is the largest of the members' (ClassicGroup.rebalanceTimeoutMs).
func (g *classicGroup) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members { // kafkasim:orderless: a maximum
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// canRebalance: the group may move to PreparingRebalance.
func (g *classicGroup) canRebalance() bool {
	return slices.Contains(validPrevious(statePreparingRebalance), g.state)
}

// supportsProtocols is ClassicGroup.supportsProtocols: an empty group takes
// any non-empty protocol list; otherwise the type must match and one of
// the protocols be supported by every member.
func (g *classicGroup) supportsProtocols(protocolType string, protocols []proto.JoinGroupProtocol) bool {
	if g.state == stateEmpty {
		return protocolType != "" && len(protocols) > 0
	}
	if g.protocolType != protocolType {
		return false
	}
	for _, p := range protocols {
		if g.supportedProtocols[p.Name] == len(g.members) {
			return true
		}
	}
	return false
}

// selectProtocol is ClassicGroup.selectProtocol: among the protocols every
// member supports, each member votes for its preferred one; the most votes
// win. Kafka breaks a tie by HashMap order; here by the protocol's name.
func selectProtocol(members []*classicMember) string {
	if len(members) == 0 {
		return ""
	}
	count := map[string]int{}
	for _, m := range members {
		for _, p := range m.protocols {
			count[p.Name]++
		}
	}
	candidates := map[string]bool{}
	for name, n := range count { // kafkasim:orderless: building a set
		if n == len(members) {
			candidates[name] = true
		}
	}
	votes := map[string]int{}
	for _, m := range members {
		if v := m.vote(candidates); v != "" {
			votes[v]++
		}
	}
	best, bestVotes := "", 0
	for name, n := range votes { // kafkasim:orderless: ties broken by name
		if n > bestVotes || (n == bestVotes && name < best) {
			best, bestVotes = name, n
		}
	}
	return best
}

// notYetRejoined are the members that have not rejoined.
func (g *classicGroup) notYetRejoined() []*classicMember {
	var out []*classicMember
	for _, m := range g.allMembers() {
		if m.awaitingJoin == nil {
			out = append(out, m)
		}
	}
	return out
}

// maybeElectNewJoinedLeader is ClassicGroup.maybeElectNewJoinedLeader:
// the leader stays if it rejoined, else the first member that did.
func (g *classicGroup) maybeElectNewJoinedLeader() bool {
	if g.leader == "" {
		return false
	}
	if g.members[g.leader].awaitingJoin != nil {
		return true
	}
	for _, m := range g.allMembers() {
		if m.awaitingJoin != nil {
			g.leader = m.id
			return true
		}
	}
	return false
}

// initNextGeneration is ClassicGroup.initNextGeneration.
func (g *classicGroup) initNextGeneration() {
	g.generation++
	if len(g.members) > 0 {
		g.protocolName = selectProtocol(g.allMembers())
		g.transitionTo(stateCompletingRebalance)
	} else {
		g.protocolName = ""
		g.transitionTo(stateEmpty)
	}
	clear(g.pendingSync)
}

// validateMember is ClassicGroup.validateMember.
func (g *classicGroup) validateMember(memberID, instanceID string) proto.ErrorCode {
	if instanceID != "" {
		existing, ok := g.staticMembers[instanceID]
		if !ok {
			return proto.UnknownMemberID
		}
		if existing != memberID {
			return proto.FencedInstanceID
		}
	}
	if _, ok := g.members[memberID]; !ok {
		return proto.UnknownMemberID
	}
	return proto.None
}

// validateOffsetCommit is ClassicGroup.validateOffsetCommit. With the bug
// no-generation-fencing the generation and the member are not checked. A
// transactional commit (TxnOffsetCommit) without a generation or a member
// is taken by a group in any state, as older TxnOffsetCommit versions
// carried neither, and one of a member of the generation is taken while
// the group completes a rebalance.
func (g *classicGroup) validateOffsetCommit(memberID, instanceID string, generation int32, transactional bool, bugs Bugs) proto.ErrorCode {
	if g.state == stateDead {
		return proto.CoordinatorNotAvailable
	}
	if generation < 0 && g.state == stateEmpty {
		// The admin client, or a consumer outside group management: an
		// empty group takes its offsets.
		return proto.None
	}
	if bugs.NoGenerationFencing {
		return proto.None
	}
	if generation >= 0 || memberID != "" || instanceID != "" {
		if err := g.validateMember(memberID, instanceID); err != proto.None {
			return err
		}
		if generation != g.generation {
			return proto.IllegalGeneration
		}
	} else if !transactional && g.state != stateEmpty {
		return proto.UnknownMemberID
	}
	if !transactional && g.state == stateCompletingRebalance {
		// The member has the new generation from its JoinGroup answer
		// but not its assignment yet.
		return proto.RebalanceInProgress
	}
	return proto.None
}

// groupValue is the GroupMetadata record of the group with assignment
// (GroupCoordinatorRecordHelpers.newGroupMetadataRecord).
func (g *classicGroup) groupValue(assignment map[string][]proto.TopicPartition) groupValue {
	v := groupValue{ProtocolType: g.protocolType, Generation: g.generation, Protocol: g.protocolName, Leader: g.leader}
	for _, m := range g.allMembers() {
		v.Members = append(v.Members, memberValue{MemberID: m.id, GroupInstanceID: m.instanceID, ClientID: m.clientID,
			RebalanceTimeout: m.rebalanceTimeout, SessionTimeout: m.sessionTimeout, Subscription: m.metadata(g.protocolName),
			Assignment: assignment[m.id]})
	}
	return v
}

// currentMembers are the members as the leader learns of them.
func (g *classicGroup) currentMembers() []proto.JoinGroupMember {
	var out []proto.JoinGroupMember
	for _, m := range g.allMembers() {
		out = append(out, proto.JoinGroupMember{MemberID: m.id, GroupInstanceID: m.instanceID, Subscription: m.metadata(g.protocolName)})
	}
	return out
}
