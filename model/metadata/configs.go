package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Dynamic configs: ConfigRecords of topics and brokers, applied to the image
// as Kafka's ConfigurationControlManager.replay and the brokers' metadata
// publishers apply them; and ClearElrRecord.

// Config names the image resolves itself (the others are kept as strings).
const (
	MinInsyncReplicasConfig     = "min.insync.replicas"
	UncleanLeaderElectionConfig = "unclean.leader.election.enable"
)

// Config resource types, as Kafka's ConfigResource.Type ids.
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4
)

// ConfigObserver, when the image's observer implements it, sees every
// ConfigRecord applied (the audit notes when a config came into force).
type ConfigObserver interface {
	ConfigApplied(im *Image, offset int64, rec *ConfigRecord)
}

func (im *Image) applyConfig(offset int64, rec *ConfigRecord) error {
	switch rec.ResourceType {
	case ResourceTopic:
		t, ok := im.Topics[rec.ResourceName]
		if !ok {
			return fmt.Errorf("metadata: config of unknown topic %s", rec.ResourceName)
		}
		if !setTopicConfig(t, rec.Name, rec.Value, false) {
			// Copy on write: a cloned image shares the map.
			t.Configs = maps.Clone(t.Configs)
			if t.Configs == nil {
				t.Configs = map[string]string{}
			}
			t.Configs[rec.Name] = rec.Value
		}
	case ResourceBroker:
		if rec.ResourceName == "" {
			im.ClusterConfigs = maps.Clone(im.ClusterConfigs)
			if im.ClusterConfigs == nil {
				im.ClusterConfigs = map[string]string{}
			}
			im.ClusterConfigs[rec.Name] = rec.Value
			// The cluster default reaches the topics that do not set
			// the config themselves.
			for _, name := range im.TopicNames() {
				setTopicConfig(im.Topics[name], rec.Name, rec.Value, true)
			}
			break
		}
		id, err := strconv.ParseInt(rec.ResourceName, 10, 32)
		if err != nil {
			return fmt.Errorf("metadata: config of broker %q", rec.ResourceName)
		}
		if im.BrokerConfigs == nil {
			im.BrokerConfigs = map[int32]map[string]string{}
		}
		cfg := maps.Clone(im.BrokerConfigs[int32(id)])
		if cfg == nil {
			cfg = map[string]string{}
		}
		cfg[rec.Name] = rec.Value
		im.BrokerConfigs[int32(id)] = cfg
	default:
		return fmt.Errorf("metadata: config of resource type %d", rec.ResourceType)
	}
	if o, ok := im.Observer.(ConfigObserver); ok {
		o.ConfigApplied(im, offset, rec)
	}
	return nil
}

// setTopicConfig sets one of the configs a Topic holds resolved, reporting
// whether name is one of them. inherited: the value is the cluster default,
// which a topic that sets the config itself keeps its own value against.
func setTopicConfig(t *Topic, name, value string, inherited bool) bool {
	switch name {
	case MinInsyncReplicasConfig:
		if inherited && !t.MinISRInherited {
			return true
		}
		if n, err := strconv.Atoi(value); err == nil {
			t.MinInsyncReplicas = n
		}
		t.MinISRInherited = inherited
		return true
	case UncleanLeaderElectionConfig:
		if inherited && !t.UncleanInherited {
			return true
		}
		t.UncleanLeaderElection = value == "true"
		t.UncleanInherited = inherited
		return true
	}
	return false
}

// clearElr is ReplicationControlManager.replay(ClearElrRecord): every
// partition of topic (of every topic for "") that has an ELR or a last known
// ELR forgets both, which bumps its partition epoch as any change does
// (PartitionRegistration.merge). A partition that had no leader and an
// empty ISR is left with nobody to elect but uncleanly (its ELR and last
// known leader were its only clean candidates): ClearedWhileLeaderless
// remembers whom it lost.
func (im *Image) clearElr(topic string) {
	for _, p := range im.Partitions() {
		if topic != "" && p.Topic != topic || len(p.ELR) == 0 && len(p.LastKnownELR) == 0 {
			continue
		}
		p = im.own(p)
		if p.Leader == NoLeader && len(p.ISR) == 0 {
			lost := slices.Clone(p.ELR)
			for _, r := range p.LastKnownELR {
				if !slices.Contains(lost, r) {
					lost = append(lost, r)
				}
			}
			slices.Sort(lost)
			p.ClearedWhileLeaderless = lost
		}
		p.ELR, p.LastKnownELR = nil, nil
		p.PartitionEpoch++
		if im.Observer != nil {
			im.Observer.PartitionChanged(im, p)
		}
	}
}

// MinISRAt is topic t's min.insync.replicas as broker reads it: its own
// dynamic config when the topic does not set one (Kafka's precedence:
// topic, broker, cluster default, static), bounded by the replication
// factor as EffectiveMinISR is.
func (im *Image) MinISRAt(t *Topic, broker int32) int {
	if t.MinISRInherited {
		if v, ok := im.BrokerConfigs[broker][MinInsyncReplicasConfig]; ok {
			if n, err := strconv.Atoi(v); err == nil {
				own := *t
				own.MinInsyncReplicas = n
				return own.EffectiveMinISR()
			}
		}
	}
	return t.EffectiveMinISR()
}
