package reports

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// GroupsView is what describe groups prints of each group, as
// kafka-consumer-groups.sh --describe's --offsets (its default), --members
// and --state.
type GroupsView int

// The views.
const (
	GroupOffsets GroupsView = iota
	GroupMembers
	GroupStates
)

// missing is what kafka-consumer-groups prints for a value it does not
// have (ConsumerGroupCommand.MISSING_COLUMN_VALUE).
const missing = "-"

// DescribeGroups prints groups (all of fs's, sorted, when ids is empty) as
// ConsumerGroupCommand.describeGroups does, view by view, with its column
// widths, its blank line before each table, its messages (an empty group:
// "has no active members", a rebalancing one: "is rebalancing", on errw as
// Kafka prints them on stderr; a dead one: "Error: ... does not exist.").
// Above each table a line gives what kafka-consumer-groups spreads over
// its views or cannot show: the protocol, state, generation and leader
// (classic) or group epoch and target assignment epoch (consumer), the
// assignment strategy, the coordinator and the member count. The log end
// offsets are the partitions' high watermarks in fs, as ListOffsets(latest)
// answers a read_uncommitted admin client; "-" for a partition without a
// leader.
func DescribeGroups(w, errw io.Writer, fs FinalState, ids []string, view GroupsView, verbose bool) error {
	if len(ids) == 0 {
		ids = fs.GroupIDs()
	}
	bw := bufio.NewWriter(w)
	for _, id := range ids {
		g, ok := fs.Group(id)
		if !ok {
			fmt.Fprintf(bw, "\nError: Consumer group '%s' does not exist.\n", id)
			continue
		}
		switch view {
		case GroupMembers:
			describeMembers(bw, errw, g, verbose)
		case GroupStates:
			describeState(bw, errw, g, verbose)
		default:
			describeOffsets(bw, errw, g, groupOffsetRows(g, fs.Partitions), verbose)
		}
	}
	return bw.Flush()
}

// groupLine is kafkasim's line above a group's table, in kafka-topics'
// "Key: value" style.
func groupLine(g GroupState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Group: %s\tProtocol: %s\tState: %s", g.GroupID, g.Protocol, g.State)
	if g.Protocol == "consumer" {
		fmt.Fprintf(&b, "\tGroupEpoch: %s\tAssignmentEpoch: %s", epoch(g.GroupEpoch), epoch(g.AssignmentEpoch))
	} else {
		leader := g.Leader
		if leader == "" {
			leader = "none"
		}
		fmt.Fprintf(&b, "\tGeneration: %s\tLeader: %s", epoch(g.Generation), leader)
	}
	fmt.Fprintf(&b, "\tAssignmentStrategy: %s\tCoordinator: %s\tMembers: %d", orMissing(g.Assignor), leaderName(g.Coordinator), len(g.Members))
	return b.String()
}

// shouldPrint is ConsumerGroupCommand.shouldPrintMemberState: the message
// a group's state calls for, and whether its table follows (not for a dead
// group, nor one with no rows).
func shouldPrint(w *bufio.Writer, errw io.Writer, g GroupState, rows int) bool {
	switch g.State {
	case "Dead":
		fmt.Fprintf(w, "\nError: Consumer group '%s' does not exist.\n", g.GroupID)
		return false
	case "Empty":
		w.Flush() // so that a terminal shows both streams in order
		fmt.Fprintf(errw, "\nConsumer group '%s' has no active members.\n", g.GroupID)
	case "PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling":
		w.Flush()
		fmt.Fprintf(errw, "\nWarning: Consumer group '%s' is rebalancing.\n", g.GroupID)
	}
	return rows > 0
}

// OffsetRow is one line of describe groups --offsets: a partition the group
// owns or committed.
type OffsetRow struct {
	Topic         string `json:"topic"`
	Partition     int32  `json:"partition"`
	CurrentOffset int64  `json:"current_offset"` // -1: nothing committed
	LeaderEpoch   int32  `json:"leader_epoch"`   // of the commit; -1: none
	LogEndOffset  int64  `json:"log_end_offset"` // -1: unknown (no leader)
	// Lag is LogEndOffset - CurrentOffset; nil when either is unknown.
	Lag        *int64 `json:"lag"`
	ConsumerID string `json:"consumer_id"` // "" for a partition no member owns
	Host       string `json:"host"`
	ClientID   string `json:"client_id"`
}

// groupOffsetRows are ConsumerGroupCommand.collectGroupsOffsets' rows: the
// members that own partitions, most partitions first, each member's
// partitions by topic and partition; then the committed partitions no
// member owns. Members of equal size come in member id order (Kafka's
// order is the coordinator's map's).
func groupOffsetRows(g GroupState, parts []PartitionState) []OffsetRow {
	committed := map[TopicPartition]CommittedOffset{}
	for _, o := range g.Offsets {
		committed[TopicPartition{o.Topic, o.Partition}] = o
	}
	hw := map[TopicPartition]int64{}
	for _, p := range parts {
		if p.Leader >= 0 {
			hw[TopicPartition{p.Topic, p.Partition}] = p.HW
		}
	}
	row := func(tp TopicPartition) OffsetRow {
		r := OffsetRow{Topic: tp.Topic, Partition: tp.Partition, CurrentOffset: -1, LeaderEpoch: -1, LogEndOffset: -1}
		if o, ok := committed[tp]; ok {
			r.CurrentOffset, r.LeaderEpoch = o.Offset, o.LeaderEpoch
		}
		if end, ok := hw[tp]; ok {
			r.LogEndOffset = end
		}
		if r.CurrentOffset >= 0 && r.LogEndOffset >= 0 {
			lag := r.LogEndOffset - r.CurrentOffset
			r.Lag = &lag
		}
		return r
	}
	members := sortedMembers(g.Members)
	sort.SliceStable(members, func(i, j int) bool { return len(members[i].Assignment) > len(members[j].Assignment) })
	var rows []OffsetRow
	owned := map[TopicPartition]bool{}
	for _, m := range members {
		for _, tp := range sortedTPs(m.Assignment) {
			owned[tp] = true
			r := row(tp)
			r.ConsumerID, r.Host, r.ClientID = m.MemberID, "/"+m.Host, m.ClientID
			rows = append(rows, r)
		}
	}
	var rest []TopicPartition
	for _, o := range g.Offsets {
		if tp := (TopicPartition{o.Topic, o.Partition}); !owned[tp] {
			rest = append(rest, tp)
		}
	}
	for _, tp := range sortedTPs(rest) {
		rows = append(rows, row(tp))
	}
	return rows
}

// describeOffsets is ConsumerGroupCommand.printOffsets.
func describeOffsets(w *bufio.Writer, errw io.Writer, g GroupState, rows []OffsetRow, verbose bool) {
	if g.State != "Dead" {
		fmt.Fprintf(w, "\n%s", groupLine(g))
	}
	if !shouldPrint(w, errw, g, len(rows)) {
		if g.State != "Dead" {
			fmt.Fprintln(w)
		}
		return
	}
	gw, tw, cw, hw := 15, 15, 15, 15
	for _, r := range rows {
		gw, tw = max(gw, len(g.GroupID)), max(tw, len(r.Topic))
		cw, hw = max(cw, len(orMissing(r.ConsumerID))), max(hw, len(orMissing(r.Host)))
	}
	cols := func(group, topic, partition, leaderEpoch, current, end, lag, consumer, host, client string) {
		fmt.Fprintf(w, "\n%-*s %-*s %-10s ", gw, group, tw, topic, partition)
		if verbose {
			fmt.Fprintf(w, "%-15s ", leaderEpoch)
		}
		fmt.Fprintf(w, "%-15s %-15s %-15s %-*s %-*s %s", current, end, lag, cw, consumer, hw, host, client)
	}
	cols("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID")
	for _, r := range rows {
		lag := missing
		if r.Lag != nil {
			lag = strconv.FormatInt(*r.Lag, 10)
		}
		cols(g.GroupID, r.Topic, strconv.Itoa(int(r.Partition)), epoch(r.LeaderEpoch), offset(r.CurrentOffset), offset(r.LogEndOffset),
			lag, orMissing(r.ConsumerID), orMissing(r.Host), orMissing(r.ClientID))
	}
	fmt.Fprintln(w)
}

// describeMembers is ConsumerGroupCommand.printMembers. As Kafka's does, it
// prints the header even when no member follows (an empty group), with the
// default widths.
func describeMembers(w *bufio.Writer, errw io.Writer, g GroupState, verbose bool) {
	if g.State != "Dead" {
		fmt.Fprintf(w, "\n%s", groupLine(g))
	}
	members := sortedMembers(g.Members)
	gw, cw, iw, hw, clw, caw, taw := 15, 15, 17, 15, 15, 20, 20
	withInstance := false
	if shouldPrint(w, errw, g, len(members)) {
		for _, m := range members {
			gw, cw, iw = max(gw, len(g.GroupID)), max(cw, len(m.MemberID)), max(iw, len(m.GroupInstanceID))
			hw, clw = max(hw, len("/"+m.Host)), max(clw, len(m.ClientID))
			withInstance = withInstance || m.GroupInstanceID != ""
			caw, taw = max(caw, len(assignmentString(m.Assignment))), max(taw, len(assignmentString(m.TargetAssignment)))
		}
	}
	cols := func(group, consumer, instance, host, client, n string) {
		if withInstance {
			fmt.Fprintf(w, "%-*s %-*s %-*s %-*s %-*s %-15s ", gw, group, cw, consumer, iw, instance, hw, host, clw, client, n)
		} else {
			fmt.Fprintf(w, "%-*s %-*s %-*s %-*s %-15s ", gw, group, cw, consumer, hw, host, clw, client, n)
		}
	}
	w.WriteString("\n")
	cols("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
	if verbose {
		fmt.Fprintf(w, "%-15s %-*s %-15s %-*s", "CURRENT-EPOCH", caw, "CURRENT-ASSIGNMENT", "TARGET-EPOCH", taw, "TARGET-ASSIGNMENT")
	}
	fmt.Fprintln(w)
	for _, m := range members {
		cols(g.GroupID, m.MemberID, m.GroupInstanceID, "/"+m.Host, m.ClientID, strconv.Itoa(len(m.Assignment)))
		if verbose {
			fmt.Fprintf(w, "%-15s %-*s %-15s %-*s", epoch(m.MemberEpoch), caw, assignmentString(m.Assignment),
				epoch(g.AssignmentEpoch), taw, assignmentString(m.TargetAssignment))
		}
		fmt.Fprintln(w)
	}
}

// describeState is ConsumerGroupCommand.printStates. The coordinator is
// "broker-<id>  (<id>)" where Kafka prints "host:port  (id)": the model's
// brokers have node names, not addresses.
func describeState(w *bufio.Writer, errw io.Writer, g GroupState, verbose bool) {
	if g.State != "Dead" {
		fmt.Fprintf(w, "\n%s", groupLine(g))
	}
	if !shouldPrint(w, errw, g, 1) {
		return
	}
	coordinator := "none"
	if g.Coordinator >= 0 {
		coordinator = fmt.Sprintf("broker-%d  (%d)", g.Coordinator, g.Coordinator)
	}
	cw, gw := max(25, len(coordinator)), max(15, len(g.GroupID))
	cols := func(group, coord, strategy, state, groupEpoch, targetEpoch, members string) {
		fmt.Fprintf(w, "\n%-*s %-*s %-20s %-20s ", gw, group, cw, coord, strategy, state)
		if verbose {
			fmt.Fprintf(w, "%-15s %-25s ", groupEpoch, targetEpoch)
		}
		w.WriteString(members)
	}
	cols("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS")
	cols(g.GroupID, coordinator, orMissing(g.Assignor), g.State, epoch(g.GroupEpoch), epoch(g.AssignmentEpoch), strconv.Itoa(len(g.Members)))
	fmt.Fprintln(w)
}

// assignmentString is ConsumerGroupCommand.getAssignmentString: per topic
// "topic:0,1,2", topics sorted and joined by ";"; "-" for none.
func assignmentString(tps []TopicPartition) string {
	if len(tps) == 0 {
		return missing
	}
	byTopic := map[string][]int{}
	for _, tp := range tps {
		byTopic[tp.Topic] = append(byTopic[tp.Topic], int(tp.Partition))
	}
	parts := make([]string, 0, len(byTopic))
	for topic, ps := range byTopic { // kafkasim:orderless: sorted below
		sort.Ints(ps)
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = strconv.Itoa(p)
		}
		parts = append(parts, topic+":"+strings.Join(s, ","))
	}
	sort.Strings(parts)
	return strings.Join(parts, ";")
}

func sortedMembers(ms []MemberState) []MemberState {
	out := append([]MemberState(nil), ms...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].MemberID < out[j].MemberID })
	return out
}

func sortedTPs(tps []TopicPartition) []TopicPartition {
	out := append([]TopicPartition(nil), tps...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

// epoch writes a generation or epoch, "-" when it does not apply (-1).
func epoch(e int32) string {
	if e < 0 {
		return missing
	}
	return strconv.Itoa(int(e))
}

// offset writes an offset, "-" when unknown (-1).
func offset(o int64) string {
	if o < 0 {
		return missing
	}
	return strconv.FormatInt(o, 10)
}

func orMissing(s string) string {
	if s == "" {
		return missing
	}
	return s
}

// GroupDescription is one group of `describe groups --json`: the whole of
// what the three views print.
type GroupDescription struct {
	Group           string              `json:"group"`
	Protocol        string              `json:"protocol"`
	State           string              `json:"state"`
	Coordinator     int32               `json:"coordinator"` // -1: none
	Generation      int32               `json:"generation"`  // -1: consumer protocol
	Leader          string              `json:"leader"`
	GroupEpoch      int32               `json:"group_epoch"`      // -1: classic protocol
	AssignmentEpoch int32               `json:"assignment_epoch"` // -1: classic protocol
	Assignor        string              `json:"assignment_strategy"`
	Members         []MemberDescription `json:"members"`
	Offsets         []OffsetRow         `json:"offsets"`
}

// MemberDescription is one member of `describe groups --json`.
type MemberDescription struct {
	ConsumerID       string   `json:"consumer_id"`
	GroupInstanceID  string   `json:"group_instance_id"`
	Host             string   `json:"host"`
	ClientID         string   `json:"client_id"`
	MemberEpoch      int32    `json:"member_epoch"` // -1: classic
	Assignment       []string `json:"assignment"`   // "orders-0"
	TargetAssignment []string `json:"target_assignment"`
}

// DescribeGroupsJSON is what DescribeGroups prints of groups ids (all when
// empty), as data; a group fs does not hold is left out.
func DescribeGroupsJSON(fs FinalState, ids []string) []GroupDescription {
	if len(ids) == 0 {
		ids = fs.GroupIDs()
	}
	out := []GroupDescription{}
	for _, id := range ids {
		g, ok := fs.Group(id)
		if !ok {
			continue
		}
		d := GroupDescription{Group: g.GroupID, Protocol: g.Protocol, State: g.State, Coordinator: g.Coordinator,
			Generation: g.Generation, Leader: g.Leader, GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch,
			Assignor: g.Assignor, Members: []MemberDescription{}, Offsets: groupOffsetRows(g, fs.Partitions)}
		if d.Offsets == nil {
			d.Offsets = []OffsetRow{}
		}
		for _, m := range sortedMembers(g.Members) {
			d.Members = append(d.Members, MemberDescription{ConsumerID: m.MemberID, GroupInstanceID: m.GroupInstanceID,
				Host: "/" + m.Host, ClientID: m.ClientID, MemberEpoch: m.MemberEpoch,
				Assignment: tpNames(m.Assignment), TargetAssignment: tpNames(m.TargetAssignment)})
		}
		out = append(out, d)
	}
	return out
}

// tpNames writes partitions as the history does, "orders-0", sorted.
func tpNames(tps []TopicPartition) []string {
	out := []string{}
	for _, tp := range sortedTPs(tps) {
		out = append(out, tp.Topic+"-"+strconv.Itoa(int(tp.Partition)))
	}
	return out
}
